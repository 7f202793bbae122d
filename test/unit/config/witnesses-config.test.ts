import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.js';
import { envRefusal, minimalEnv } from '../../support/config-refusal.js';

const KEY = 'example.org/witness+22d92554+BGv78nHWz4/3e3NrEm7mFGWDo74kAN30e0X35iZvGRod';
const witnesses = (value?: string) =>
  parseConfig(value === undefined ? minimalEnv : { ...minimalEnv, LETHE_WITNESSES: value }).log.witnesses;

describe('the witnesses checkpoints are submitted to (LETHE_WITNESSES)', () => {
  it('are none unless named, and each named one is read with a default timeout', () => {
    expect(witnesses()).toEqual([]);
    expect(witnesses('[]')).toEqual([]);
    expect(witnesses(JSON.stringify([{ name: 'w1', url: 'https://w.example/', key: KEY }]))).toEqual([
      { name: 'w1', url: 'https://w.example/', key: KEY, timeoutMs: 5000 },
    ]);
    const local = {
      name: 'stack',
      url: 'http://127.0.0.1:7380',
      key: KEY,
      enrol: { witnessctl: '/b/wctl', db: '/d.db' },
    };
    expect(witnesses(JSON.stringify([local]))).toEqual([{ ...local, timeoutMs: 5000 }]);
  });

  it('are refused at boot, naming the variable, when an entry is not a witness', () => {
    const entry = { name: 'w1', url: 'https://w.example/', key: KEY };
    for (const value of [
      'w1=https://w.example',
      '{}',
      JSON.stringify([{ ...entry, name: 'W 1' }]),
      JSON.stringify([{ ...entry, url: 'ftp://w.example/' }]),
      JSON.stringify([{ ...entry, key: 'example.org/witness+22d92554+AQ==' }]),
      // An Ed25519 signed-note key (0x01), not a cosignature/v1 key (0x04).
      JSON.stringify([{ ...entry, key: 'example.org/witness+22d92554+AWv78nHWz4/3e3NrEm7mFGWDo74kAN30e0X35iZvGRod' }]),
      JSON.stringify([{ ...entry, extra: 1 }]),
      JSON.stringify([entry, entry]),
    ])
      expect(envRefusal({ LETHE_WITNESSES: value }).variable, value).toBe('LETHE_WITNESSES');
  });
});

import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.js';
import { envRefusal, minimalEnv } from '../../support/config-refusal.js';

const base = { ...minimalEnv, LETHE_ENV: 'test' };
const every = (value?: string) =>
  parseConfig(value === undefined ? base : { ...base, LETHE_KEK_ROTATION_EVERY: value }).sealing.rotationEveryMs;

describe('the scheduled KEK rotation’s interval', () => {
  it('rotates daily unless told otherwise, and is off only when set off', () => {
    expect(every()).toBe(86_400_000);
    expect(every('off')).toBeNull();
    expect(every('15m')).toBe(900_000);
    expect(every('6h')).toBe(21_600_000);
    expect(every('90d')).toBe(90 * 86_400_000);
  });

  it('refuses at boot, naming the variable, what is not an interval or is out of bounds', () => {
    for (const value of ['', 'OFF', 'never', '0h', '14m', '91d', '24', '1.5h', '-1d', '24 h', '1w', '1d\u0000', '٣h'])
      expect(envRefusal({ LETHE_KEK_ROTATION_EVERY: value }).variable, JSON.stringify(value)).toBe(
        'LETHE_KEK_ROTATION_EVERY',
      );
  });
});

describe('the PostgreSQL under FerretDB, read for the compaction’s snapshot check', () => {
  it('is optional, and refused at boot, naming the variable, when it is not a postgres URL', () => {
    expect(parseConfig(base).postgres).toEqual({});
    expect(parseConfig({ ...base, LETHE_POSTGRES_URL: 'postgres://lethe@db:5432/ferretdb' }).postgres).toEqual({
      url: 'postgres://lethe@db:5432/ferretdb',
    });
    for (const value of [
      'mysql://db/x',
      'db:5432',
      'postgres://',
      'postgres://a b@db/x',
      'postgres://lethe@db/ferret\u0000db',
      'postgres://lethe@db/x\nhost=elsewhere',
      'postgres://lethe@db/x\u007f',
      'postgres://lethé@db/x',
    ])
      expect(envRefusal({ LETHE_POSTGRES_URL: value }).variable, value).toBe('LETHE_POSTGRES_URL');
  });
});

import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.js';
import { configRefusal } from '../../support/config-refusal.js';
import { temporalConnectionOptions } from '../../../src/config/temporal-connection.js';

const base = {
  LETHE_ENV: 'production',
  LETHE_FINGERPRINT_SECRET: 'f'.repeat(32),
  LETHE_KEK_FILE: '/keys/kek.json',
  LETHE_EMBEDDER: 'hashing',
  TEMPORAL_ADDRESS: 'temporal.internal:7233',
};

/** Files by name, as the connection builder reads them. */
const files: Record<string, string> = { '/tls/ca.pem': 'CA', '/tls/client.pem': 'CERT', '/tls/client.key': 'KEY' };
const read = (file: string) => {
  const text = files[file];
  if (text === undefined) throw Object.assign(new Error(`ENOENT: ${file}`), { code: 'ENOENT' });
  return Buffer.from(text);
};
const optionsOf = (env: Record<string, string>) =>
  temporalConnectionOptions(parseConfig({ ...base, ...env }).temporal, read);

const refusal = configRefusal;

describe('Temporal connection options', () => {
  it('are plain without TLS settings or an API key, as on the local stack', () => {
    expect(optionsOf({})).toEqual({ address: 'temporal.internal:7233' });
  });

  it('carry the CA, the client certificate pair (mTLS) and the server name, read from their files', () => {
    expect(
      optionsOf({
        LETHE_TEMPORAL_TLS_CA: '/tls/ca.pem',
        LETHE_TEMPORAL_TLS_CERT: '/tls/client.pem',
        LETHE_TEMPORAL_TLS_KEY: '/tls/client.key',
        LETHE_TEMPORAL_TLS_SERVER_NAME: 'temporal.example',
      }),
    ).toEqual({
      address: 'temporal.internal:7233',
      tls: {
        serverRootCACertificate: Buffer.from('CA'),
        clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') },
        serverNameOverride: 'temporal.example',
      },
    });
  });

  it('carry an API key, and TLS with the system roots when LETHE_TEMPORAL_TLS is true', () => {
    expect(optionsOf({ LETHE_TEMPORAL_API_KEY: 'key-1', LETHE_TEMPORAL_TLS: 'true' })).toEqual({
      address: 'temporal.internal:7233',
      tls: {},
      apiKey: 'key-1',
    });
  });

  it('refuse a certificate without its key, an unreadable file, or TLS files with TLS off, naming the variable', () => {
    expect(refusal(() => optionsOf({ LETHE_TEMPORAL_TLS_CERT: '/tls/client.pem' })).variable).toBe(
      'LETHE_TEMPORAL_TLS_KEY',
    );
    expect(refusal(() => optionsOf({ LETHE_TEMPORAL_TLS_KEY: '/tls/client.key' })).variable).toBe(
      'LETHE_TEMPORAL_TLS_CERT',
    );
    const unreadable = refusal(() => optionsOf({ LETHE_TEMPORAL_TLS_CA: '/tls/missing.pem' }));
    expect(unreadable.variable).toBe('LETHE_TEMPORAL_TLS_CA');
    expect(unreadable.message).toBe('LETHE_TEMPORAL_TLS_CA: cannot read /tls/missing.pem (ENOENT)');
    expect(
      refusal(() => optionsOf({ LETHE_TEMPORAL_TLS: 'false', LETHE_TEMPORAL_TLS_CA: '/tls/ca.pem' })).variable,
    ).toBe('LETHE_TEMPORAL_TLS');
  });
});

import fs from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import { ConfigError, type Config } from './config.js';

/** What `Connection.connect`/`lazy` (client) and `NativeConnection.connect` (worker) both take from the configuration. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig;
  apiKey?: string;
}

/**
 * The Temporal connection options: TLS (a CA, a client certificate pair for mTLS, a server name) and an API key.
 * Files are read here, at start: one that cannot be read stops the process, naming its variable (never its content).
 * Without TLS and without an API key, the connection is plain, as the local stack's is.
 */
export function temporalConnectionOptions(
  temporal: Config['temporal'],
  read: (file: string) => Buffer = (file) => fs.readFileSync(file),
): TemporalConnectionOptions {
  const load = (variable: string, file: string) => {
    try {
      return read(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ConfigError(variable, `cannot read ${file} (${code})`);
    }
  };
  const { tls } = temporal;
  return {
    address: temporal.address,
    ...(tls
      ? {
          tls: {
            ...(tls.caFile ? { serverRootCACertificate: load('LETHE_TEMPORAL_TLS_CA', tls.caFile) } : {}),
            ...(tls.certFile && tls.keyFile
              ? {
                  clientCertPair: {
                    crt: load('LETHE_TEMPORAL_TLS_CERT', tls.certFile),
                    key: load('LETHE_TEMPORAL_TLS_KEY', tls.keyFile),
                  },
                }
              : {}),
            ...(tls.serverName ? { serverNameOverride: tls.serverName } : {}),
          },
        }
      : {}),
    // With an API key and no TLS settings, the SDK connects with TLS (system roots): a key never travels in clear.
    ...(temporal.apiKey ? { apiKey: temporal.apiKey } : {}),
  };
}

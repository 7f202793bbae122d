import { decodeJwt } from 'jose';
import { createApiClient, type ApiClient } from './api-client.js';
import { CliError, ExitCode } from './exit-codes.js';

/** What every API-backed command needs: the client, the tenant, and how to print. */
export interface CliContext {
  api: ApiClient;
  tenant: string;
  json: boolean;
  print(value: unknown): void;
}

export function createCliContext(options: {
  api?: string;
  token?: string;
  tenant?: string;
  json?: boolean;
}): CliContext {
  const token = options.token ?? process.env.LETHE_TOKEN;
  if (!token)
    throw new CliError('--token: required (or set LETHE_TOKEN; mint one with `lethe token mint`)', ExitCode.usage);
  let tenant = options.tenant;
  if (!tenant) {
    try {
      tenant = String(decodeJwt(token).tenant ?? '');
    } catch {
      throw new CliError('--token: not a bearer token', ExitCode.usage);
    }
  }
  if (!tenant) throw new CliError('--tenant: required', ExitCode.usage);
  const json = options.json ?? false;
  return {
    api: createApiClient(options.api ?? process.env.LETHE_API_URL ?? 'http://127.0.0.1:8080', token),
    tenant,
    json,
    print(value) {
      process.stdout.write(typeof value === 'string' ? `${value}\n` : `${JSON.stringify(value, null, json ? 2 : 0)}\n`);
    },
  };
}

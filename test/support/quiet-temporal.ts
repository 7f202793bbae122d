import { DefaultLogger, Runtime } from '@temporalio/worker';

/** Keeps the SDK's informational worker logs out of test output (once per test process). */
export function quietTemporal(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: 'ERROR' } } });
  } catch {
    // already installed in this process
  }
}

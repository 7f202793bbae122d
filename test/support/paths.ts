import path from 'node:path';
import { loadStackConfig } from '../../stack/stack-config.js';

/** The workflow bundle the global setup builds once for the whole suite. */
export function workflowBundlePath(): string {
  return path.join(loadStackConfig().stateDir, 'test-workflow-bundle.js');
}

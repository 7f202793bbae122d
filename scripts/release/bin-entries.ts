/**
 * The release's bin/ files. Each imports the compiled entry point beside it: no tsx, no build step, nothing from
 * the checkout. The API and the worker are one image, selected by command.
 */
const COMMANDS = {
  lethe: { file: 'lethe.mjs', module: 'app/cli/main.js', what: 'The lethe CLI' },
  'lethe-api': { file: 'lethe-api.mjs', module: 'app/api/server.main.js', what: 'The HTTP API' },
  'lethe-worker': { file: 'lethe-worker.mjs', module: 'app/worker/worker.main.js', what: 'The Temporal worker' },
} as const;

/** The package.json `bin` field: command name → file. */
export const RELEASE_BINS: Record<string, string> = Object.fromEntries(
  Object.entries(COMMANDS).map(([name, c]) => [name, `bin/${c.file}`]),
);

/** bin/ file name → its text. */
export const BIN_ENTRIES: Record<string, string> = Object.fromEntries(
  Object.values(COMMANDS).map((c) => [
    c.file,
    `#!/usr/bin/env node\n// ${c.what}, from the compiled release.\nimport '../${c.module}';\n`,
  ]),
);

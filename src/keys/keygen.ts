import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { defaultProjectOf, isValidName, NAME_RULE } from '../projects/index.js';
import { newKeySecret, sha256Hex } from '../key-secrets.js';

/**
 * `npm run keygen -- --team T [--projects a,b] [--id name]`: prints a new API key once, and
 * the YAML entry (with only its SHA-256) to paste under auth.keys.
 */
function main(argv: string[]): number {
  let values: { team?: string; projects?: string; id?: string };
  try {
    ({ values } = parseArgs({ args: argv, options: { team: { type: 'string' }, projects: { type: 'string' }, id: { type: 'string' } } }));
  } catch (err) {
    process.stderr.write(`keygen: ${(err as Error).message}\n`);
    return 1;
  }
  if (!values.team || !isValidName(values.team)) {
    process.stderr.write(`keygen: --team <team> is required (${NAME_RULE})\n`);
    return 1;
  }
  const projects = values.projects ? values.projects.split(',').map((p) => p.trim()).filter(Boolean) : ['*'];
  const bad = projects.find((p) => p !== '*' && !isValidName(p));
  if (bad !== undefined) {
    process.stderr.write(`keygen: project "${bad}" is not ${NAME_RULE}\n`);
    return 1;
  }
  const key = newKeySecret();
  const id = values.id ?? `${values.team}-${randomBytes(3).toString('hex')}`;
  const entry = [
    `    - id: ${id}`,
    `      sha256: "${sha256Hex(key)}"`,
    `      team: ${values.team}`,
    `      projects: [${projects.map((p) => JSON.stringify(p)).join(', ')}]`,
    // Spelled out, though it is what the key would get anyway: where requests without the project header go.
    `      defaultProject: ${defaultProjectOf(projects)}`,
  ].join('\n');
  process.stdout.write(
    `API key (shown once, store it now):\n\n  ${key}\n\nAdd this entry under auth.keys in your config:\n\n${entry}\n`,
  );
  return 0;
}

process.exitCode = main(process.argv.slice(2));

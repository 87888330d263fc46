/** Progress lines go to stderr, so stdout carries only the markdown tables. */
export const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);

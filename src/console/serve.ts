import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { errors, writeError } from '../errors.js';

/** Where the console is served (SPEC 17). */
export const CONSOLE_PATH = '/console/';

/** Headers on every console response (SPEC 17): no inline script, no framing, no referrer, no sniffing. */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
} as const;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

/** Vite names what it hashes under assets/: those never change under one name, so browsers keep them a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** index.html (and any file outside assets/) is revalidated, so a new build is picked up at once. */
const REVALIDATE = 'no-cache';

interface ConsoleFile {
  readonly type: string;
  readonly body: Buffer;
  /** The gzip encoding, when it is smaller (text files). */
  readonly gzipped: Buffer | null;
  readonly cacheControl: string;
}

/** The repository root: the first folder above this module with a package.json (src/console when run from source, dist/src/console when built). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('no package.json above the console module');
    dir = parent;
  }
  return dir;
}

/** The console build's default place: dist/console/ of the repository (`npm run build`). */
export function defaultConsoleDir(): string {
  return join(packageRoot(), 'dist', 'console');
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

function loadFile(path: string, urlPath: string): ConsoleFile {
  const body = readFileSync(path);
  const type = CONTENT_TYPES[extname(path)] ?? 'application/octet-stream';
  const gzipped = type.startsWith('text/') || type === 'image/svg+xml' ? gzipSync(body) : null;
  return { type, body, gzipped: gzipped !== null && gzipped.length < body.length ? gzipped : null, cacheControl: urlPath.startsWith(`${CONSOLE_PATH}assets/`) ? IMMUTABLE : REVALIDATE };
}

/**
 * The console's files, read once when the gateway is built (the build is a few hundred KB):
 * URL path → file. Null when there is no build at `dir` (the gateway then serves no console).
 */
export function loadConsoleFiles(dir: string): ReadonlyMap<string, ConsoleFile> | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const files = new Map<string, ConsoleFile>();
  for (const path of filesUnder(dir)) {
    const urlPath = CONSOLE_PATH + relative(dir, path).split(sep).join('/');
    files.set(urlPath, loadFile(path, urlPath));
  }
  files.set(CONSOLE_PATH, files.get(`${CONSOLE_PATH}index.html`)!);
  return files;
}

const acceptsGzip = (req: IncomingMessage): boolean => /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));

function sendFile(req: IncomingMessage, res: ServerResponse, file: ConsoleFile): void {
  const gzip = file.gzipped !== null && acceptsGzip(req);
  const body = gzip ? file.gzipped! : file.body;
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': file.type,
    'content-length': body.length,
    'cache-control': file.cacheControl,
    ...(file.gzipped === null ? {} : { vary: 'accept-encoding' }),
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** Answers a console request, or hands it to `next` (the operations app). */
export type ConsoleHandler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/**
 * Serves the console at /console/ from the files of its build (SPEC 17); anything else (or no
 * build) is handed to `next`. The query string is ignored: the console routes with the hash.
 */
export function createConsoleHandler(dir: string = defaultConsoleDir()): ConsoleHandler | null {
  const files = loadConsoleFiles(dir);
  if (files === null) return null;
  return (req, res, next) => {
    const path = (req.url ?? '').split('?', 1)[0]!;
    if (path === '/console') {
      res.writeHead(301, { ...SECURITY_HEADERS, location: CONSOLE_PATH, 'content-length': 0 });
      res.end();
      return;
    }
    const file = files.get(path);
    if (file === undefined) return next();
    if (req.method !== 'GET' && req.method !== 'HEAD') return writeError(res, errors.methodNotAllowed(req.method ?? '', path, 'GET, HEAD'));
    sendFile(req, res, file);
  };
}

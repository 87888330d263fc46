import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

/** JSON lines on stdout (or `destination`: the benchmark's /dev/null); `level` comes from config (LOG_LEVEL overrides it). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'tollgate' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Belt and braces: the code never logs credentials, and these paths are redacted if it ever does.
    redact: { paths: ['authorization', 'headers.authorization', 'req.headers.authorization', '*.apiKey'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** The one logging call the store makes (a pino logger fits). */
export interface StoreLogger {
  warn(obj: object, msg: string): void;
}

export const silentLogger: StoreLogger = { warn: () => undefined };

export { CONSOLE_PATH, createConsoleHandler, defaultConsoleDir, type ConsoleHandler } from './serve.js';

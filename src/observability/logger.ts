/**
 * A small structured logger: one JSON object per line on stderr. Fields whose names look secret
 * are redacted, so a careless call cannot leak a key or token into the log.
 */
import { isRecord } from '../common/narrow';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET_FIELD = /(key|token|secret|password|authorization|credential|signature|sig)$/i;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

/** Redacts secret-looking fields at any depth (headers objects, nested options). */
export function redact(fields: LogFields, depth = 0): LogFields {
  const out: LogFields = {};
  for (const [name, value] of Object.entries(fields)) {
    if (SECRET_FIELD.test(name) && !/Id$/.test(name)) out[name] = '[redacted]';
    else if (value instanceof Error) out[name] = { name: value.name, message: value.message, stack: value.stack };
    else if (isRecord(value) && depth < 5) out[name] = redact(value, depth + 1);
    else out[name] = value;
  }
  return out;
}

export function createLogger(level: LogLevel = 'info', base: LogFields = {},
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Logger {
  const threshold = LEVELS[level];
  const emit = (at: LogLevel, message: string, fields: LogFields = {}): void => {
    if (LEVELS[at] < threshold) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: at, msg: message, ...redact({ ...base, ...fields }) }));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}

/** For tests and tools that want silence. */
export const silentLogger: Logger = createLogger('error', {}, () => undefined);

import type { ChildProcess } from 'node:child_process';

/**
 * Questions a benchmark parent asks a child over the fork IPC channel, and the child's answers:
 * `ask(child, 'loop-delay', …)` in the parent, `answer('loop-delay', …)` in the child. Each
 * question carries an id, so answers to concurrent questions never cross.
 */

interface Question {
  readonly type: 'ipc-question';
  readonly topic: string;
  readonly id: number;
  readonly payload: unknown;
}

interface Answer {
  readonly type: 'ipc-answer';
  readonly id: number;
  readonly result?: unknown;
  readonly error?: string;
}

const isObject = (message: unknown): message is Record<string, unknown> => typeof message === 'object' && message !== null;
const isQuestion = (message: unknown): message is Question => isObject(message) && message.type === 'ipc-question';
const isAnswer = (message: unknown): message is Answer => isObject(message) && message.type === 'ipc-answer';

/** Child side: answers every question on `topic` with what `respond` returns. */
export function answer<P, R>(topic: string, respond: (payload: P) => R | Promise<R>): void {
  process.on('message', (message: unknown) => {
    if (!isQuestion(message) || message.topic !== topic) return;
    const reply = (body: Omit<Answer, 'type' | 'id'>): void => void process.send?.({ type: 'ipc-answer', id: message.id, ...body });
    Promise.resolve()
      .then(() => respond(message.payload as P))
      .then(
        (result) => reply({ result }),
        (err: unknown) => reply({ error: err instanceof Error ? err.message : String(err) }),
      );
  });
}

let nextId = 1;

/** Parent side: one question to a child, answered within `timeoutMs` or rejected. */
export function ask<R>(child: ChildProcess, topic: string, payload: unknown = null, timeoutMs = 10_000): Promise<R> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown): void => {
      if (!isAnswer(message) || message.id !== id) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      if (message.error !== undefined) reject(new Error(`${topic}: ${message.error}`));
      else resolve(message.result as R);
    };
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error(`a benchmark child did not answer "${topic}" within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', onMessage);
    const question: Question = { type: 'ipc-question', topic, id, payload };
    child.send(question);
  });
}

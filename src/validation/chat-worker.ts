import { parentPort, workerData } from 'node:worker_threads';
import { checkChatBodyNow } from './check-now.js';
import type { ChatFactSettings } from './chat-facts.js';
import { toPortable, type ChatWorkerReply, type ChatWorkerTask } from './chat-worker-messages.js';

// A chat worker: checks one body at a time for the ChatBodyChecker's pool.
const port = parentPort;
if (port === null) throw new Error('chat-worker runs as a worker thread of a ChatBodyChecker');
const settings = workerData as ChatFactSettings;

/** The reply to a task, and the buffers it transfers. */
function answer({ bytes, contentType }: ChatWorkerTask): [ChatWorkerReply, ArrayBuffer[]] {
  try {
    const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const [check, transfer] = toPortable(checkChatBodyNow(raw, contentType, settings));
    return [{ check }, transfer];
  } catch (err) {
    // A bug in the check fails this request (500), not the worker.
    return [{ failure: err instanceof Error ? (err.stack ?? err.message) : String(err) }, []];
  }
}

port.on('message', (task: ChatWorkerTask) => {
  const [reply, transfer] = answer(task);
  port.postMessage(reply, transfer);
});

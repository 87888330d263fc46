/**
 * Polls a condition that depends on another process (Redis reconnecting, a gateway connecting
 * to its store) for which there is no event to await. Fails after `timeoutMs`.
 */
export async function eventually(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

import { useState } from 'preact/hooks';

/** A secret shown this once (a new or rotated key): with a copy button, gone when dismissed. */
export function SecretBox({ title, secret, onDismiss }: { readonly title: string; readonly secret: string; readonly onDismiss: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = (): void => {
    navigator.clipboard.writeText(secret).then(
      () => setCopied('Copied.'),
      () => setCopied('Copying was refused by the browser: select the key and copy it by hand.'),
    );
  };
  return (
    <section class="secret" aria-label={title} role="region">
      <h2>{title}</h2>
      <p>This is the only time the key is shown. Store it now.</p>
      <output class="secret-value" data-testid="secret" aria-label="The new key">{secret}</output>
      <div class="actions">
        <button type="button" onClick={copy}>Copy key</button>
        <button type="button" class="secondary" onClick={onDismiss}>Done</button>
        <span role="status">{copied}</span>
      </div>
    </section>
  );
}

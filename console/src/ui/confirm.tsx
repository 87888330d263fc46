import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/** A modal confirmation (the native dialog: focus moves into it, Escape cancels, focus returns to its opener). */
export function Confirm({ title, children, confirmLabel, onConfirm, onCancel }: { readonly title: string; readonly children: ComponentChildren; readonly confirmLabel: string; readonly onConfirm: () => void; readonly onCancel: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    // Back to the control that opened it once it goes (the dialog pattern): a keyboard user goes on from there.
    const opener = document.activeElement;
    const element = dialog.current;
    element?.showModal();
    return () => {
      // Closed first: while a modal dialog is open the rest of the page is inert, and focus() on the opener does nothing.
      element?.close();
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog ref={dialog} aria-label={title} onCancel={(event) => (event.preventDefault(), onCancel())}>
      <h2>{title}</h2>
      {children}
      <div class="actions">
        <button type="button" class="danger" onClick={onConfirm}>{confirmLabel}</button>
        <button type="button" class="secondary" onClick={onCancel} autoFocus>Cancel</button>
      </div>
    </dialog>
  );
}

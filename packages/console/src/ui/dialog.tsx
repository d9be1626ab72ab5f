import { type ReactNode, useEffect, useRef } from 'react';

/**
 * A modal on the platform's own `<dialog>`: `showModal()` makes the rest of the page inert (focus
 * stays inside), Escape closes it, and closing gives focus back to what had it. No inline styles
 * or scripts, so it works under the console's Content-Security-Policy.
 */
export function Dialog({
  open,
  title,
  onClose,
  children,
}: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} onClose={onClose} aria-labelledby="dialog-title">
      <h2 id="dialog-title">{title}</h2>
      {open ? children : null}
    </dialog>
  );
}

/** Asks once, naming what will be lost; `onConfirm` runs on the destructive button. */
export function ConfirmDialog({
  open,
  title,
  children,
  confirm,
  onConfirm,
  onClose,
  busy,
}: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirm: string;
  onConfirm: () => void;
  onClose: () => void;
  busy?: boolean;
}) {
  return (
    <Dialog open={open} title={title} onClose={onClose}>
      <div className="dialog-body">{children}</div>
      <div className="actions">
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        <button type="button" className="danger" onClick={onConfirm} disabled={busy}>
          {confirm}
        </button>
      </div>
    </Dialog>
  );
}

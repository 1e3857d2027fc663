import type { RefObject } from 'preact';
import { useEffect } from 'preact/hooks';

/**
 * Shows the `<dialog>` of `ref` as a modal once it is mounted, calls `onClose` when the browser
 * closes it (Escape, a form with method="dialog"), and closes it when the component goes: what
 * the analytics page's dialogs (details, filter editor, notes, goal properties, live view) share.
 */
export function useModal(ref: RefObject<HTMLDialogElement>, onClose: () => void): void {
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    if (!element.open) element.showModal();
    const closed = () => onClose();
    element.addEventListener('close', closed);
    return () => {
      element.removeEventListener('close', closed);
      if (element.open) element.close();
    };
  }, []);
}

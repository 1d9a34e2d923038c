import { useEffect, useState } from 'preact/hooks';

/** What the page says about the operator's last action: done, failed, or still under way. */
export interface Notice {
  text: string;
  kind: 'done' | 'error' | 'pending';
}

/** A success is news for a moment, not a state: it goes after this long; an error stays until dismissed or replaced. */
export const DONE_NOTICE_MS = 8_000;

export function useNotice(): [Notice | undefined, (notice: Notice | undefined) => void] {
  const [notice, setNotice] = useState<Notice | undefined>();
  useEffect(() => {
    if (notice?.kind !== 'done') return;
    const timer = window.setTimeout(() => setNotice(undefined), DONE_NOTICE_MS); // clock-ok: the page runs in the browser, outside any simulated clock
    return () => window.clearTimeout(timer);
  }, [notice]);
  return [notice, setNotice];
}

export function NoticeBanner({ notice, onDismiss }: { notice: Notice | undefined; onDismiss: () => void }) {
  if (!notice) return null;
  return (
    <p role="status" class={notice.kind === 'error' ? 'notice error' : 'notice'} data-testid="notice" data-kind={notice.kind}>
      <span data-field="text">{notice.text}</span>
      <button type="button" class="dismiss" aria-label="Dismiss" onClick={onDismiss}>
        ×
      </button>
    </p>
  );
}

/** A labelled bar a screen reader reads as a progress bar, its value as text beside it. */
export function ProgressBar({ label, value, max, text, testId }: { label: string; value: number; max: number; text?: string; testId?: string }) {
  const percent = max <= 0 ? 0 : Math.min(100, Math.max(0, Math.round((value / max) * 100)));
  return (
    <div class="bar-row">
      <span class="bar-label">{label}</span>
      <div class="bar" role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent} data-testid={testId}>
        <div class="bar-fill" style={{ width: `${percent}%` }} />
      </div>
      <span class="bar-text">{text ?? `${percent}%`}</span>
    </div>
  );
}

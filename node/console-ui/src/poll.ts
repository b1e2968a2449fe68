/**
 * Refreshes a page's data every `intervalMs` while the tab is visible (at
 * once when it becomes visible again); a slow answer never stacks requests.
 * `load` is told whether the call is a background refresh (every call after
 * the first): those go out marked as such and do not keep the session alive,
 * so a page left open still signs out after the idle timeout.
 * Returns a function that stops it.
 */
export function poll(load: (background: boolean) => Promise<void>, intervalMs: () => number): () => void {
  let first = true;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  const tick = async () => {
    if (stopped || running) return;
    running = true;
    try {
      const background = !first;
      first = false;
      await load(background);
    } finally {
      running = false;
      schedule();
    }
  };
  const schedule = () => {
    if (stopped) return;
    clearTimeout(timer);
    if (document.visibilityState === 'visible') timer = setTimeout(() => void tick(), intervalMs());
  };
  const onVisible = () => {
    if (document.visibilityState === 'visible') void tick();
  };
  document.addEventListener('visibilitychange', onVisible);
  void tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
    document.removeEventListener('visibilitychange', onVisible);
  };
}

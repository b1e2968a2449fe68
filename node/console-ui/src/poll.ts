/**
 * Refreshes a page's data every `intervalMs` while the tab is visible (at
 * once when it becomes visible again); a slow answer never stacks requests.
 * Returns a function that stops it.
 */
export function poll(load: () => Promise<void>, intervalMs: () => number): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  const tick = async () => {
    if (stopped || running) return;
    running = true;
    try {
      await load();
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

/**
 * Whether a process of this machine is still running, from its pid: a signal 0 probe (EPERM means
 * it runs under another user). For state files that name their writer (a cache's journal owner, a
 * run still marked running in the run index).
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

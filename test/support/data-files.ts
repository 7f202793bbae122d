/**
 * Raw reads of the local stack's data files: what a copy of the disk would hold, whatever the servers say.
 */
import { execFileSync } from 'node:child_process';

/**
 * Files under `dir` containing `needle`. grep exits 2 when a file could not be read — a table file a concurrent
 * rewrite removed mid-scan, or one it may not open: the scan is run again, and a file that stays unreadable fails
 * the scan (an unread file is not a clean one).
 */
export function grepFiles(dir: string, needle: string, options: { exclude?: string } = {}): string[] {
  const args = ['-rlaF', ...(options.exclude ? [`--exclude-dir=${options.exclude}`] : []), needle, dir];
  for (let attempt = 1; ; attempt++) {
    try {
      return execFileSync('grep', args, { encoding: 'utf8', stdio: 'pipe', maxBuffer: 64 * 1024 * 1024 })
        .split('\n')
        .filter(Boolean);
    } catch (error) {
      const { status, stdout, stderr } = error as { status?: number; stdout?: string; stderr?: string };
      if (status === 1) return [];
      const found = (stdout ?? '').split('\n').filter(Boolean);
      if (status === 2 && found.length > 0) return found;
      if (status !== 2 || attempt >= 3) throw new Error(`grep ${dir}: exit ${status}: ${String(stderr).slice(0, 300)}`);
    }
  }
}

// CPU accounting for the bench, read from /proc (Linux): the CPU of the processes the bench started, the CPU
// of everything else on the machine (the noise guard), and the busiest thread of a workerd process (the
// Worker's thread: its CPU per request is the figure the platform bills and limits).
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on Linux (getconf CLK_TCK)

/** utime + stime of a /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat line (fields 14 and 15). */
function ticksOf(statLine) {
  const fields = statLine.slice(statLine.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function readTicks(path) {
  try {
    return ticksOf(readFileSync(path, 'utf8'));
  } catch {
    return 0; // the process or thread is gone
  }
}

/** Every process on the machine: pid → { ppid, comm } (kernel threads, children of kthreadd, left out). */
function processes() {
  const table = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const line = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = line.slice(line.indexOf('(') + 1, line.lastIndexOf(')'));
      const ppid = Number(line.slice(line.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== 2 && Number(entry) !== 2) table.set(Number(entry), { ppid, comm });
    } catch {}
  }
  return table;
}

/** `root` and all its descendants. */
export function processTree(root) {
  const table = processes();
  const children = new Map();
  for (const [pid, { ppid }] of table) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const tree = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop();
    if (!table.has(pid)) continue;
    tree.push({ pid, comm: table.get(pid).comm });
    stack.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/**
 * CPU ticks of the processes outside the bench's own tree. Kernel threads and interrupts are not counted:
 * the bench's own load makes them (disk syncs of SQLite files, loopback traffic).
 */
function foreignTicks() {
  const own = new Set(processTree(process.pid).map(({ pid }) => pid));
  let ticks = 0;
  for (const pid of processes().keys()) if (!own.has(pid)) ticks += readTicks(`/proc/${pid}/stat`);
  return ticks;
}

/** Resident memory (MiB) of `root` and its descendants. */
export function treeRssMiB(root) {
  let pages = 0;
  for (const { pid } of processTree(root)) {
    try {
      pages += Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
    } catch {}
  }
  return (pages * 4096) / 2 ** 20;
}

/** Ticks of every thread of every workerd process under `root`: "pid/tid" → ticks. */
function workerdThreads(root) {
  const threads = new Map();
  for (const { pid, comm } of processTree(root)) {
    if (!comm.startsWith('workerd')) continue;
    let tids = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {}
    for (const tid of tids) threads.set(`${pid}/${tid}`, readTicks(`/proc/${pid}/task/${tid}/stat`));
  }
  return threads;
}

/**
 * Starts a measurement window. `stop()` answers the cores used by processes outside the bench's own tree
 * (`foreignCores`) and the CPU seconds of the busiest workerd thread under `workerRoot` (`workerCpuSeconds`).
 */
export function cpuWindow(workerRoot) {
  const started = performance.now();
  const foreign0 = foreignTicks();
  const threads0 = workerdThreads(workerRoot);
  return {
    stop() {
      const seconds = (performance.now() - started) / 1000;
      const foreign = foreignTicks() - foreign0;
      let busiest = 0;
      for (const [id, ticks] of workerdThreads(workerRoot))
        busiest = Math.max(busiest, ticks - (threads0.get(id) ?? 0));
      return {
        seconds,
        foreignCores: Math.max(foreign, 0) / TICKS_PER_SECOND / seconds,
        workerCpuSeconds: busiest / TICKS_PER_SECOND,
      };
    },
  };
}

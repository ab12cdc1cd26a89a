// Start-up time of the all-in-one process: spawn `node dist/bin/caregraph.js all`
// and time the first 200 from /readyz. Each run gets a fresh DATA_DIR ("cold":
// migrations, job queue installation, demo seed) and then starts once more on
// the same DATA_DIR ("warm": everything already applied).
//   node bench/startup.mjs [runs]        (after npm run build)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const runs = Number(process.argv[2] ?? 3);
const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function startOnce(dataDir) {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/bin/caregraph.js', 'all'], {
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`);
        if (res.status === 200) return performance.now() - started;
      } catch {}
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
  }
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${s[0].toFixed(0)} / median ${s[Math.floor(s.length / 2)].toFixed(0)} / max ${s[s.length - 1].toFixed(0)} ms`;
};
const cold = [];
const warm = [];
for (let i = 0; i < runs; i++) {
  const dir = mkdtempSync(path.join(tmpdir(), 'caregraph-startup-'));
  try {
    cold.push(await startOnce(dir));
    warm.push(await startOnce(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(`cold (fresh DATA_DIR): ${stats(cold)}`);
console.log(`warm (migrated DATA_DIR): ${stats(warm)}`);

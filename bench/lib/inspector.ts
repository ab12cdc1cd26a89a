import WebSocket from 'ws';

/**
 * A full garbage collection in a process started with `--inspect=127.0.0.1:<port>`, through the inspector
 * protocol (`HeapProfiler.collectGarbage`), so a heap sample taken right after counts live memory only.
 */
export async function collectGarbage(inspectPort: number): Promise<void> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as Array<{ webSocketDebuggerUrl?: string }>;
  const url = targets.find((t) => t.webSocketDebuggerUrl)?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${inspectPort}`);
  const socket = new WebSocket(url);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    await new Promise<void>((resolve, reject) => {
      socket.on('message', (data) => {
        const reply = JSON.parse(String(data)) as { id?: number; error?: { message: string } };
        if (reply.id !== 1) return;
        if (reply.error) reject(new Error(`HeapProfiler.collectGarbage: ${reply.error.message}`));
        else resolve();
      });
      socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    });
  } finally {
    socket.close();
  }
}

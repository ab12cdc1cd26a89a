/**
 * A test-side reader of MTOM/XOP answers (multipart/related), independent of the gateway's: the root part (the
 * one named by `start`, else the first) as text, and the other parts by Content-ID.
 */
export function readMultipart(contentType: string, bytes: Buffer): { root: string; parts: Map<string, Buffer> } {
  const boundary = /boundary="?([^";]+)"?/.exec(contentType)![1];
  const start = /start="?<([^>"]+)>"?/.exec(contentType)?.[1];
  const parts = new Map<string, Buffer>();
  let root = '';
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const all = Buffer.concat([Buffer.from('\r\n'), bytes]);
  let at = all.indexOf(delimiter);
  while (at >= 0) {
    const headerStart = at + delimiter.length;
    if (all.subarray(headerStart, headerStart + 2).toString() === '--') break;
    const headerEnd = all.indexOf('\r\n\r\n', headerStart);
    const next = all.indexOf(delimiter, headerEnd);
    const headers = all.subarray(headerStart, headerEnd).toString();
    const id = /content-id:\s*<([^>]+)>/i.exec(headers)?.[1] ?? '';
    const content = all.subarray(headerEnd + 4, next);
    if (id === start || (!start && !root)) root = content.toString('utf8');
    else parts.set(id, content);
    at = next;
  }
  return { root, parts };
}

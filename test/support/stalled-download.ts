import net from 'node:net';

export interface StalledDownload {
  status: number;
  head: string;
  /** Reads on from where it stopped to the end of the connection: every byte the server sent. */
  readRest(): Promise<Buffer>;
  /** Closes the connection from this side. */
  close(): void;
}

/**
 * A client that sends the request, reads the status line and the headers, then reads nothing:
 * what the server sent next waits in the socket buffers, then in the server.
 */
export function stalledDownload(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
): Promise<StalledDownload> {
  const { hostname, port } = new URL(baseUrl);
  const socket = net.connect(Number(port), hostname);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n${lines.join('')}\r\n`);
  const received: Buffer[] = [];
  // A reset (the server gave up on the socket) ends the reading too.
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => {});
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      received.push(chunk);
      const text = Buffer.concat(received).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.pause();
      socket.off('data', onData);
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]),
        head: text.slice(0, end),
        async readRest() {
          socket.on('data', (more: Buffer) => received.push(more));
          socket.resume();
          await ended;
          return Buffer.concat(received);
        },
        close: () => socket.destroy(),
      });
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

/** Whether a chunked body reached its last chunk: the server ended the file itself. */
export const complete = (raw: Buffer) => raw.toString('latin1').endsWith('\r\n0\r\n\r\n');

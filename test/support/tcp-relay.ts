// A plain TCP relay, for the partition fault test: each argument `listenHost:port=targetHost:port`
// accepts connections on the first address and pipes each to a new connection to the second.
// Prints `relaying` once every listener is up; a connection whose other side fails is closed.
// Run by Node itself, which strips the types (so only erasable TypeScript here).
//
//   node test/support/tcp-relay.ts 10.213.0.1:6379=127.0.0.1:6379 …
import { connect, createServer } from 'node:net';

const addressOf = (text: string): { host: string; port: number } => {
  const colon = text.lastIndexOf(':');
  return { host: text.slice(0, colon), port: Number(text.slice(colon + 1)) };
};

const routes = process.argv.slice(2).map((arg) => {
  const [listen, target] = arg.split('=');
  if (listen === undefined || target === undefined) throw new Error(`not listenHost:port=targetHost:port: ${arg}`);
  return { listen: addressOf(listen), target: addressOf(target) };
});

await Promise.all(
  routes.map(
    ({ listen, target }) =>
      new Promise<void>((resolve, reject) => {
        const server = createServer((socket) => {
          const upstream = connect(target.port, target.host);
          const close = () => {
            socket.destroy();
            upstream.destroy();
          };
          socket.on('error', close);
          upstream.on('error', close);
          socket.on('close', close);
          upstream.on('close', close);
          socket.pipe(upstream);
          upstream.pipe(socket);
        });
        server.once('error', reject);
        server.listen(listen.port, listen.host, () => resolve());
      }),
  ),
);
process.stdout.write('relaying\n');

/** Start an http.Server on 127.0.0.1 (any port): `{ origin, server, close() }` plus `extra`'s fields. */
export async function listenLocal(server, extra = {}) {
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    server,
    ...extra,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

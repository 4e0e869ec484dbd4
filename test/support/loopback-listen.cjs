// Preloaded into test sellers: whatever host a server asks for, it listens on loopback only.
const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    args[0] = { ...first, host: '127.0.0.1' };
    return listen.apply(this, args);
  }
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    const callback = args.find((a) => typeof a === 'function');
    return listen.call(this, { port: Number(first), host: '127.0.0.1' }, callback);
  }
  return listen.apply(this, args);
};

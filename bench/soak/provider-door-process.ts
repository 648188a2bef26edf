// The provider's door as a process of its own (bench/soak/doors.ts startProviderDoor): forwards
// every call to the simulator named on the command line and notes when it arrived, what it was and
// how it was answered; tells its parent its URL, then a count every second, and everything it noted
// when asked. It does nothing else, so its arrival times are as exact as a process can stamp them.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { listen, providerDoorServer } from './doors.ts';

const { server, calls, tokens } = providerDoorServer(process.argv[2]!);
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
process.send!({ url: await listen(server) });
const tell = setInterval(() => process.send!({ count: calls.length }), 1000);
process.on('message', (m) => {
  if (m === 'records') process.send!({ records: { calls, tokens: [...tokens], loopDelay: { p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 } } });
});
process.on('disconnect', () => {
  clearInterval(tell);
  server.closeAllConnections();
  server.close();
});

// `npm run provider-sim`: the simulator alone, on PROVIDER_SIM_PORT (default 8090), with the
// development accounts of DATA_DIR/provider-sim.json.
import { loadConfig } from '../runtime/config.ts';
import { startDevProviderSim } from './dev.ts';

const config = loadConfig();
const { sim, credentials, samplesCsv } = await startDevProviderSim({
  dataDir: config.dataDir,
  port: config.provider.simPort,
  host: config.provider.simHost,
  recipientClientId: config.provider.clientId,
  webhookUrl: config.provider.simCallbackUrl,
});
process.stdout.write(
  [
    `Identity-provider simulator (Sumsub API) at ${sim.url}  (Ctrl-C stops it)`,
    `  recipient (this service): PROVIDER_APP_TOKEN=${credentials.recipient.appToken} ` +
      `PROVIDER_SECRET_KEY=${credentials.recipient.secretKey} PROVIDER_CLIENT_ID=` +
      `${credentials.recipient.clientId}`,
    `  donor (kyc-share-token):  SUMSUB_BASE_URL=${sim.url} SUMSUB_APP_TOKEN=${credentials.donor.appToken} SUMSUB_SECRET_KEY=${credentials.donor.secretKey}`,
    `  sample donor applicants:  ${samplesCsv}`,
    '',
  ].join('\n'),
);
const stop = () => void sim.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

// Names shared by the API, the worker and the workflows. Node-free: workflows import it too.

/** The Temporal Schedule that runs housekeeping; created or updated when a worker starts. */
export const HOUSEKEEPING_SCHEDULE_ID = 'vouch-housekeeping';
export const HOUSEKEEPING_INTERVAL = '1 minute';

import type { Config } from './config';
import type { Secrets } from './secrets';
import type { Logger } from './logger';
import type { Database } from './db/database';

/** What every role of a CareGraph process is started with. */
export interface Runtime {
  config: Config;
  secrets: Secrets;
  logger: Logger;
}

export interface SubgraphStartOptions extends Runtime {
  db: Database;
  host: string;
  port: number;
}

/** Something started that must be stopped on shutdown, in reverse order of start. */
export interface Stoppable {
  name: string;
  close(): Promise<void>;
}

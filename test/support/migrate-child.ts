// `npm run db:migrate` in a child process (run through run-ts.js), for tests
// that race several processes on one database.
import { main } from '../../scripts/db-migrate';

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);

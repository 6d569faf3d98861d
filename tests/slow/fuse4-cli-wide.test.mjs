// fuse4 through the CLI's sharded builds, part jobs and join (with values), and --kind smallest,
// at every rate and size of tests/js/helpers/fuse4-cli-cases.mjs (10^6-key candidates for
// --kind smallest included); tests/js/fuse4-cli.test.mjs runs a few of them in npm test.
import { defineFuse4CliTests } from '../js/helpers/fuse4-cli-cases.mjs';

defineFuse4CliTests({ wide: true });

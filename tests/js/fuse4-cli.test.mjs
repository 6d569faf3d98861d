// fuse4 through the CLI's sharded builds, part jobs and join (with values), and --kind smallest,
// at a few rates and sizes (tests/js/helpers/fuse4-cli-cases.mjs; every rate and size:
// tests/slow/fuse4-cli-wide.test.mjs).
import { defineFuse4CliTests } from './helpers/fuse4-cli-cases.mjs';

defineFuse4CliTests({ wide: false });

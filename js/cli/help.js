// @ts-check
// Help texts: `bloomgate --help` and `bloomgate <command> --help`.

export const EXIT_CODES_TEXT = `Exit codes:
  0   success (query: every item is "no")
  1   query: at least one item is "maybe"
  64  usage error: unknown command or option, missing argument, bad number,
      a --capacity/--error-rate too large to allocate, or a --port in use
  65  data error: malformed input line, corrupt or incompatible filter file,
      a size past the format's limits (E_TOO_LARGE)
  66  an input file cannot be opened or read
  70  internal error (a bug: please report it)
  71  out of memory (E_NOMEM): WebAssembly memory is at most 4 GiB
  73  the output file (or stdout) cannot be created or written (a full disk too)
  75  try again later: another publish holds the site's lock (E_LOCKED)`;

export const MAIN_HELP = `bloomgate — Bloom filters for "definitely not / maybe" checks

Usage:
  bloomgate build [input|-] -o out.bgf [options]   build a filter from lines, a HIBP dump or URLs
  bloomgate inspect file.bgf [--json]              show header, fill and error rates, checksum
  bloomgate query file.bgf [items...]              print "maybe" or "no" per item (stdin if none)
  bloomgate merge -o out.bgf a.bgf b.bgf [...]     OR together filters with the same parameters
  bloomgate join -o out.bgf PART...                join the shard parts of a fuse build
  bloomgate compact counting.bgf -o out.bgf        publish a counting filter as a classic one
  bloomgate serve [--filter NAME=F.bgf] [...]      reference server: filters, /range, /hashes
  bloomgate export-ranges store.bgs -o DIR         the exact store as static range files
  bloomgate diff OLD.bgf NEW.bgf -o DELTA.bgd      the delta from one generation to the next
  bloomgate patch OLD.bgf DELTA.bgd -o NEW.bgf     apply a delta (checked against its target)
  bloomgate publish NEW.bgf --dir SITE [--keep N]  a static filter site: file, deltas, manifest.json
  bloomgate keygen -o publisher.key               a publisher key (Ed25519); prints the public key
  bloomgate keys rotate --dir SITE --old K --new K move a site to a new key set, signed by the old
  bloomgate <command> --help                       options of one command
  bloomgate --version                              print the version

Errors are one line on stderr: "bloomgate: <message> (<code>)".

${EXIT_CODES_TEXT}
`;

export const COMMAND_HELP = {
  build: `Usage: bloomgate build [input|DIR|-] -o out.bgf [options]

Build a filter file from one item per line (LF or CRLF). Reads stdin when the
input is "-" or missing. Empty lines are skipped. Lines may be at most 65536 bytes.

Options:
  -o, --output FILE      the .bgf file to write (required; written atomically)
  --capacity N           items the filter is sized for (default: the number of
                         items in the input, counted in a first pass; a piped
                         stdin is then held in memory, so give --capacity for
                         large piped inputs)
  --error-rate P         target false-positive rate, 0 < P < 1 (default 0.01)
  --seed S               hash seed, 0..2^64-1, decimal or 0x hex (default 0)
  --format F             lines (default): each line is an item (its UTF-8 bytes)
                         hibp: "SHA1HEX:COUNT" rows of a Have I Been Pwned dump;
                         the filter answers for the plaintext passwords. The
                         input may also be the downloader's directory of
                         per-prefix files (21BD1.txt: "SUFFIX:COUNT" rows).
                         Byte order marks are skipped; NTLM dumps are refused
                         urls: a URL or Safe Browsing expression per line
                         ("evil.example" lists the whole host); the filter
                         answers for any URL under a listed expression, and
                         --error-rate is the share of clean URLs that escalate
  --store FILE           also write the exact store (.bgs) the server answers
                         escalations from (hibp and urls formats)
  --list-id HEX32        the list's identity (32 hex digits), stored in the
                         filter and the store (default: a random id when
                         --store is given, so the two files are paired;
                         otherwise unnamed, all zero)
  --list-id-from STORE.bgs
                         the list id of an existing store (hibp and urls): a
                         subset filter (--min-count N) of the list whose whole
                         store the server answers from, which clients then
                         believe; a different --list-id is refused
  --generation N         a number to raise with each rebuild of the same list,
                         stored in the filter and the store (default 0)
  --like PREVIOUS.bgf    the next generation of PREVIOUS's list: its kind,
                         capacity, error rate, seed and list id, generation + 1,
                         so 'bloomgate diff' makes a small delta; an error when
                         the items outgrow its capacity (leave headroom: build
                         generation 0 for ~1.5x its items). Not for fuse kinds
  --min-count C          hibp: skip rows whose COUNT is below C (default 1, which
                         drops the count-0 padding rows of the HIBP range API)
  --buckets B1,B2,...    hibp: store each hash's COUNT bucket as a value (the
                         index of the largest bound <= COUNT; bounds ascending,
                         at most 256); rows below B1 are dropped (B1 is the min
                         count). Builds --kind fuse4; checkPassword then says
                         seenAtLeast. urls: a second, tab-separated column
                         (URL<TAB>THREAT) stores the threat label as a value
  --value-bits R         bits per value, 1..8 (default: the fewest that hold the
                         buckets or labels)
  --kind K               classic (default), blocked (fastest queries), fuse
                         (static; fuse8 ~0.39% / fuse16 ~0.0015% by
                         --error-rate), counting (deletions), scalable
                         (grows past --capacity), cuckoo (deletions), or
                         smallest: the kind with the smallest file that meets
                         --error-rate at this capacity (measured: fuse8 at
                         rates >= 0.39% from ~1M keys, cuckoo below, fuse16
                         near 2^-16; bits per key at 1M: 9.0 fuse8, 12.6
                         cuckoo at 0.1% against 14.4 classic and 18.0 fuse16)
  --shards S             fuse: split the keys into S shards (a power of two;
                         default 1 up to 2^24 = 16,777,216 of --capacity, then
                         enough for at most 2^24 each); several shards are
                         built one at a time through temporary files next to
                         the output, so any size builds in bounded memory
  --jobs N               fuse: build N shards at a time, in worker threads
                         (default 1; memory grows with N)
  --shard I/S            fuse: build only shard I of S (0 <= I < S) from the
                         whole input, as one job of a distributed build; join
                         the S parts with 'bloomgate join' (same bytes as one
                         build with --shards S and the same options)
  --description TEXT     stored in the file's metadata
  --created              store the build time in the metadata (left out by
                         default so the same input gives the same file;
                         SOURCE_DATE_EPOCH is honoured)
  --skip-invalid         skip malformed lines instead of failing; report how many
  --progress             draw the progress bar even when stderr is not a terminal
  -q, --quiet            print nothing but errors
  -h, --help             this help

A malformed line fails the build with exit code 65 and its line number, and
no output file is left behind.

${EXIT_CODES_TEXT}
`,
  inspect: `Usage: bloomgate inspect file.bgf [--json]

Print every header field of a filter file, its metadata, fill ratio,
estimated item count and error rates, and whether the checksum matches.
Warns when the filter holds more items than its capacity or is over-full.
A corrupt file prints what could be read and the error, and exits with 65.

Options:
  --json        one JSON object on stdout, for machines
  -h, --help    this help

${EXIT_CODES_TEXT}
`,
  query: `Usage: bloomgate query file.bgf [items...]

Print "maybe<TAB>item" or "no<TAB>item" for each item. With no items on the
command line, reads them from stdin, one per line (LF or CRLF; empty lines
skipped). "no" is certain; "maybe" is a false positive at the filter's error rate.
Filters built with --format hibp take plaintext passwords.

The exit status answers for scripts: 0 when every item is "no", 1 when any
item is "maybe", 64 and above for an error (below), so
  if bloomgate query pw.bgf "$password" >/dev/null; then echo "not listed"; fi

Options:
  --json        print a JSON array of {"item": ..., "maybe": true|false}
  -h, --help    this help

${EXIT_CODES_TEXT}
`,
  diff: `Usage: bloomgate diff OLD.bgf NEW.bgf -o DELTA.bgd

Write the delta (.bgd, docs/FORMAT.md) that turns OLD into NEW: two
generations of one list in one geometry (build NEW with --like OLD). The
delta names OLD exactly (list id, generation, length, checksum) and NEW's
checksum, so it applies to nothing else and its result is verified.

Options:
  -o, --output FILE   the .bgd file to write (required; written atomically)
  -q, --quiet         no summary on stderr
  -h, --help          this help

${EXIT_CODES_TEXT}
`,
  patch: `Usage: bloomgate patch OLD.bgf DELTA.bgd -o NEW.bgf

Apply a delta to the generation it names. The result is checked against the
target checksum the delta carries and validated like any filter file; a delta
for another base is E_DELTA_BASE, a damaged one E_DELTA or E_CHECKSUM (exit 65),
and nothing is written. A delta that claims a target more than 8 times its
base's length is refused (E_DELTA) before anything is allocated.

Options:
  -o, --output FILE   the .bgf file to write (required; written atomically)
  -q, --quiet         no summary on stderr
  -h, --help          this help

${EXIT_CODES_TEXT}
`,
  publish: `Usage: bloomgate publish NEW.bgf --dir SITE [--sign KEY ...] [options]

Add a generation to a static filter site that any web server (or 'bloomgate
serve --static SITE') serves and openFilter() reads: SITE/filter-G.bgf, a
delta from each of the last N generations to G (delta-F-G.bgd, kept only when
it is smaller than half the file), and SITE/manifest.json (docs/FORMAT.md,
"Publication manifest"), written last and atomically, so a reader never sees
a manifest naming files that are not there yet. The manifest binds the list
id, the generation, an expiry and the length and SHA-256 of every file, and
--sign signs those bytes: clients that pin your public key (openFilter(url,
{ keys })) refuse anything else. Files of generations older than the last N
are removed after the new manifest is in place. A lock file
(SITE/.bloomgate.lock) keeps two runs on one site apart: the second exits 75.

NEW must name a list (build it with --like, --list-id or --store) and be the
next generation of the list the site holds. Publishing the site's current
file again renews the expiry (sign it again before it expires).

The first signed publish records the key set (the --sign keys and
--threshold) in SITE/keys.json; later publishes must be signed by it, and
'keys rotate' needs its threshold. A signed site refuses an unsigned publish
unless --unsigned says so. A key file inside SITE is refused (the site is
public). On stderr the last line is what an app passes to openFilter() to
accept this list only, signed by these keys, one JavaScript object literal:
  client options: { keys: ['ed25519:...'], threshold: 1, listId: '<32 hex>' }
(unsigned: client options: { listId: '<32 hex>' }).

Options:
  --dir DIR             the site directory (created when missing)
  --sign KEYFILE        sign with this private key ('bloomgate keygen');
                        repeat for k-of-n. Without it the manifest is unsigned
                        and clients cannot tell it from a forgery
  --threshold N         signatures the site's first key set needs (default:
                        every --sign key; --sign K1 --sign K2 --sign K3
                        --threshold 2 is 2-of-3, so one lost key locks no
                        one out). Recorded in keys.json; 'keys rotate' changes it
  --unsigned            publish unsigned onto a signed site (manifest signed,
                        or keys.json): every client that pins its keys then
                        refuses every update until a signed publish
  --expires-in D        how long the manifest is good for: 7d (default), 12h,
                        90m, 3600s; 60s to 366d. Past it, clients flag every
                        answer stale: re-publish (or re-sign) sooner
  --keep N              generations to keep deltas from (default 3)
  --min-refresh SECONDS how long clients wait between manifest checks
                        (default 3600; 0 lets them check as often as they like)
  --replace-list        NEW is of another list: it replaces the site's list,
                        and the signed manifest names the old list as replaced,
                        so clients holding it move on (signed clients only)
  --force               allow a generation jump of more than one
  -q, --quiet           no summary on stderr
  -h, --help            this help

${EXIT_CODES_TEXT}
`,
  keygen: `Usage: bloomgate keygen -o publisher.key

Write a new Ed25519 private key to FILE (PKCS#8 PEM, mode 0600; an existing
file is never overwritten) and print its public key, 'ed25519:BASE64URL', on
stdout: the value apps pin with openFilter(url, { keys: ['ed25519:...'] }).
Keep the private key off the web host: whoever holds it can publish filters
your clients believe. A FILE inside a bloomgate site (a directory, or one
above it, holding a filter or endpoint manifest.json or a keys.json) is
refused: the site is served as it is.

Options:
  -o, --output FILE     where to write the private key (required)
  -q, --quiet           print only the public key
  -h, --help            this help

${EXIT_CODES_TEXT}
`,
  keys: `Usage: bloomgate keys rotate --dir SITE --old KEYFILE --new KEYFILE|ed25519:... [options]

Move a site to a new key set: key set N+1 (its keys and threshold) is signed
by the outgoing keys and appended to SITE/keys.json (docs/FORMAT.md, "Key
rotation"). Clients that trust the outgoing set verify it, trust the new set
from then on and refuse what only the old keys sign. When every --new is a
private key file (at least --threshold of them), manifest.json is signed again
with the new keys at once; otherwise publish next with --sign NEWKEY.

Refused, with the site left as it was: fewer --old keys than the current
set's threshold (the last rotation's, or the one keys.json recorded when the
site was first signed; a site signed before that records none, so every key
with a valid signature on its manifest is needed), an --old key outside the
current set, a key file inside SITE, and a public --new key without
--allow-unheld-new-key. The last line printed is the new set's client options.

Options:
  --dir DIR             the site directory (it must have a manifest.json)
  --old KEYFILE         an outgoing private key; repeat to reach the current
                        set's threshold
  --new KEY             an incoming key: a private key file or its public
                        'ed25519:...'; repeat for k-of-n
  --threshold N         signatures the new set needs (default 1)
  --allow-unheld-new-key
                        accept --new 'ed25519:...' keys whose private half is
                        not given here (an offline key, another publisher's).
                        If nobody holds them, the site is locked for good:
                        clients follow the rotation and refuse the old keys
  --expires-in D        expiry of the re-signed manifest (default 7d)
  -q, --quiet           no summary on stderr
  -h, --help            this help

${EXIT_CODES_TEXT}
`,
  merge: `Usage: bloomgate merge -o out.bgf a.bgf b.bgf [...]

OR together filters built with the same kind, m, k, seed, hash and key
encoding (build each partition with the same --capacity, --error-rate and
--seed). The result answers "maybe" for every item of every input: the same
bits as one build over the union of the inputs.

Options:
  -o, --output FILE   the .bgf file to write (required; written atomically)
  -q, --quiet         print nothing but errors
  -h, --help          this help

${EXIT_CODES_TEXT}
`,
  join: `Usage: bloomgate join -o out.bgf PART...

Join the parts of a sharded fuse build (one 'bloomgate build ... --kind fuse
--shard I/S' job per shard, each over the whole input with the same options)
into one filter file: byte for byte the file 'bloomgate build ... --kind fuse
--shards S' writes on one machine. Every part is validated; parts of
different builds, a shard given twice or a missing shard fail with exit 65.

Options:
  -o, --output FILE   the .bgf file to write (required; written atomically)
  --progress          draw the progress bar even when stderr is not a terminal
  -q, --quiet         print nothing but errors
  -h, --help          this help

${EXIT_CODES_TEXT}
`,
  compact: `Usage: bloomgate compact counting.bgf -o out.bgf

Write the classic filter a counting filter answers like: same m, k and seed,
bit i set iff counter i is non-zero. Keep the counting master (it can delete)
on the server; publish the smaller classic file.

Options:
  -o, --output FILE   the .bgf file to write (required; written atomically)
  -q, --quiet         print nothing but errors
  -h, --help          this help

${EXIT_CODES_TEXT}
`,
  serve: `Usage: bloomgate serve [options]

The reference server (node:http), on 127.0.0.1 unless --host says otherwise:
  GET /filters/NAME.bgf   a filter, with ETag / If-None-Match, Cache-Control, CORS
  GET /range/{5 hex}      breached-password ranges (SUFFIX:COUNT lines; Add-Padding)
  GET /hashes/{8 hex}     full SHA-256 hashes of listed URL expressions
Malformed prefixes get 400. Stops on SIGINT / SIGTERM. --static never serves
dotfiles or dot-directories (.env, .git/), *.key, *.pem, *.p8, *.p12, *.pfx,
*.ppk files, or a file whose first bytes are a private key: each is a 404.

Options:
  --filter NAME=FILE      serve FILE at /filters/NAME.bgf (repeatable)
  --password-store FILE   .bgs written by build --format hibp --store
  --url-store FILE        .bgs written by build --format urls --store
  --static DIR            serve the files under DIR for other paths
  --host H                address to bind (default 127.0.0.1)
  --port P                port (default 8787; 0 picks a free one)
  --max-age S             Cache-Control max-age in seconds (default 300)
  --sign KEY              sign the stores' endpoint manifests with this private key
                          (bloomgate keygen; repeatable for k-of-n) and answer
                          /range/{5 hex}.proof, /hashes/{block}.proof: clients with
                          the publisher's keys check every "not listed" against it
  --expires-in D          with --sign: how long each signed manifest is good for
                          (default 1d; 60s to 366d); signed again with a fresh
                          expiry every quarter of D while the server runs
  -h, --help              this help

${EXIT_CODES_TEXT}
`,
  'export-ranges': `Usage: bloomgate export-ranges store.bgs -o DIR [--pad] [--sign KEY ... [--expires-in D]]

Write an exact store as static files any CDN or object store can serve:
  password stores: DIR/range/{5 hex} for all 1,048,576 prefixes
  URL stores:      DIR/hashes/{8 hex} for each prefix that has hashes
                   (a missing file, answered 404, means none)
and in that directory manifest.json, which clients check before they believe
a "not listed". The export is written into a hidden temporary directory, the
manifest last, and renamed into place only when complete. Deployment recipes
are written beside it: DIR/bloomgate-nginx.conf and DIR/_headers. A --sign key
file inside DIR is refused. On stderr the last line is what an app passes to
checkPassword() / checkUrl(), one JavaScript object literal:
  client options: { keys: ['ed25519:...'], threshold: 1, listId: '<32 hex>' }

Options:
  -o, --output DIR    directory to write into
  --pad               pad each range file with 800-1000 count-0 rows, once
                      (about 37 GB for all 1,048,576 files; unpadded files
                      hold only the listed suffixes)
  --sign KEY          sign the manifest with this private key (bloomgate keygen;
                      repeatable for k-of-n) and write a proof beside the replies:
                      range/{5 hex}.proof (640 bytes each, 2^20 more files),
                      hashes/{block}.proof; clients with the publisher's keys
                      check every "not listed" against the signed Merkle root
  --expires-in D      with --sign: clients stop believing the export after D
                      (default 7d; 12h, 90m; 60s to 366d): export again (or
                      re-sign) before then
  -q, --quiet         print nothing but errors
  -h, --help          this help

${EXIT_CODES_TEXT}
`,
};

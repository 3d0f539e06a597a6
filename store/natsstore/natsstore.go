package natsstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	neturl "net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/helmlog/helm/store"
)

// Options say which home on the server a Store is, and how to reach it.
type Options struct {
	// Home names the home: its stream is HELM_<Home>, its voyages'
	// subjects helm.<Home>.v.<voyage>, its buckets HELM_<Home>_voyages
	// and HELM_<Home>_artifacts, and its artifacts' keys the stream
	// KEYS_HELM_<Home>. Letters, digits, '-' and '_'. Empty: "default".
	Home string
	// Replicas is the replication factor of the streams and buckets Open
	// creates (0: 1), and the least it accepts of those it finds: a
	// stream of fewer replicas is refused (*SettingsError). A cluster of
	// three or more servers takes 3.
	Replicas int
	// CredsFile is a NATS credentials file (a user JWT and its NKey seed).
	CredsFile string
	// TLS: CAFile, a PEM file of the certificate authorities to trust
	// (empty: the system's); CertFile and KeyFile, a client certificate
	// and its key, for servers that ask for one. A tls:// URL, or any of
	// these, makes the connection use TLS.
	CAFile, CertFile, KeyFile string
	// Warn, when set, is called by the Open that creates the home's
	// stream, once, with what the caller should know about the
	// durability of what it stores (a stream of one replica): the
	// home's later Opens, by any client, say nothing.
	Warn func(msg string)
	// Name is the connection's name, as the server's monitoring shows it
	// (empty: "helm").
	Name string
}

// Store is a home on a JetStream server. It is safe for concurrent use.
type Store struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	url     string // the server's URL, for errors
	home    string
	stream  jetstream.Stream
	kv      jetstream.KeyValue
	obs     jetstream.ObjectStore
	keys    jetstream.Stream // the artifacts' keys (keys.go)
	names   names
	timeout time.Duration // an operation's, when its context has no deadline
	attempt time.Duration // a request's, retried within the operation's
	created bool          // this Open created the home's stream
}

// names are the names of a home's stream, subjects and buckets.
type names struct {
	stream, subjects, prefix, voyages, artifacts string
	keys, keySubjects, keyPrefix                 string
}

func namesOf(home string) names {
	return names{
		stream:      "HELM_" + home,
		prefix:      "helm." + home + ".v.",
		subjects:    "helm." + home + ".v.*",
		voyages:     "HELM_" + home + "_voyages",
		artifacts:   "HELM_" + home + "_artifacts",
		keys:        "KEYS_HELM_" + home,
		keyPrefix:   "helm." + home + ".k.",
		keySubjects: "helm." + home + ".k.>",
	}
}

func (n names) subject(voyage string) string { return n.prefix + voyage }

// A request to the server whose context has no deadline of its own is
// bounded by opTimeout, retries included. Each attempt of a request is
// bounded by attemptTimeout, whatever its context says: a request sent to
// a stream leader that has just gone is lost, not refused, and is retried
// (idempotently) once a new leader is elected, in a second or two.
const (
	opTimeout      = time.Minute
	attemptTimeout = 2 * time.Second
)

// Open connects to the JetStream server at url (nats://host:port, or
// several, comma-separated, of one cluster; tls://host:port for TLS) and
// returns the store of opts.Home there, creating its stream and buckets
// if they are missing. It refuses a home whose stream or buckets could
// remove a unit helm acknowledged (a *SettingsError, matching
// ErrUnsafeSettings; see the package's documentation), and then creates
// nothing.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Home == "" {
		o.Home = "default"
	}
	if err := checkName("home", o.Home); err != nil {
		return nil, err
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.Replicas < 1 || o.Replicas > 5 {
		return nil, fmt.Errorf("jetstream: %d replicas: a stream takes 1 to 5", o.Replicas)
	}
	if o.Name == "" {
		o.Name = "helm"
	}
	copts := []nats.Option{nats.Name(o.Name), nats.MaxReconnects(-1)}
	if o.CredsFile != "" {
		copts = append(copts, nats.UserCredentials(o.CredsFile))
	}
	if o.CAFile != "" {
		copts = append(copts, nats.RootCAs(o.CAFile))
	}
	if o.CertFile != "" || o.KeyFile != "" {
		copts = append(copts, nats.ClientCert(o.CertFile, o.KeyFile))
	}
	nc, err := nats.Connect(url, copts...)
	if err != nil {
		return nil, fmt.Errorf("jetstream: connect to %s: %w (is a nats-server with JetStream running there, and are the credentials and TLS files right?)", redact(url), err)
	}
	s := &Store{nc: nc, url: redact(nc.ConnectedUrl()), home: o.Home, names: namesOf(o.Home), timeout: opTimeout, attempt: attemptTimeout}
	if err := s.setUp(ctx, o.Replicas); err != nil {
		nc.Close()
		return nil, err
	}
	if o.Warn != nil && s.created && s.replicas() == 1 {
		o.Warn(fmt.Sprintf("the home %s on %s has one replica: its acknowledged writes survive a crash of the server but not a power cut, unless the server runs with sync_interval: always (nats-server 2.10 and later); a cluster of three with replicas 3 survives both", o.Home, s.url))
	}
	return s, nil
}

// redact returns the server URLs in urls (comma-separated) without
// their secrets, for messages: a password becomes xxxxx, and so does a
// user name given without one, which NATS takes for a token.
func redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		u, err := neturl.Parse(p)
		switch {
		case err == nil && u.User != nil:
			if _, ok := u.User.Password(); ok {
				u.User = neturl.UserPassword(u.User.Username(), "xxxxx")
			} else {
				u.User = neturl.User("xxxxx")
			}
			p = u.String()
		case strings.Contains(p, "@"):
			// No URL this parser reads (host:port without a scheme,
			// which nats.go takes): all before the last @ may be secret.
			scheme, rest, ok := strings.Cut(p, "://")
			if !ok {
				scheme, rest = "", p
			} else {
				scheme += "://"
			}
			p = scheme + "xxxxx@" + rest[strings.LastIndex(rest, "@")+1:]
		}
		parts[i] = p
	}
	return strings.Join(parts, ",")
}

// checkName refuses a name that cannot be a NATS subject token, a stream
// name and a key of a bucket, all three.
func checkName(what, name string) error {
	if name == "" {
		return fmt.Errorf("jetstream: an empty %s cannot name a NATS subject token", what)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("jetstream: %s %q cannot name a NATS subject token, stream and key: use letters, digits, '-' and '_' only", what, name)
		}
	}
	if len(name) > 200 {
		return fmt.Errorf("jetstream: %s %q is too long for a stream name", what, name[:20]+"...")
	}
	return nil
}

// ctx gives an operation a deadline when its context has none.
func (s *Store) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.timeout)
}

// retry runs a request, each attempt within s.attempt, again while it
// fails in a way that passes (retryable) and ctx lasts. Only idempotent
// requests are retried so.
func (s *Store) retry(ctx context.Context, request func(ctx context.Context) error) error {
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, s.attempt)
		err := request(actx)
		cancel()
		if err == nil || !retryable(err) || ctx.Err() != nil {
			return err
		}
		pause(ctx, attempt)
	}
}

// setUp finds or creates the home's stream and buckets. It reads the
// settings of each that is there before it creates any that is missing,
// and refuses them all (a *SettingsError) if one could remove what helm
// acknowledged: an Open that is refused creates nothing.
func (s *Store) setUp(ctx context.Context, replicas int) error {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	js, err := jetstream.New(s.nc)
	if err != nil {
		return err
	}
	s.js = js
	kvStream, objStream := "KV_"+s.names.voyages, "OBJ_"+s.names.artifacts
	found := map[string]jetstream.Stream{}
	for _, name := range []string{s.names.stream, kvStream, objStream, s.names.keys} {
		st, err := js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("jetstream: stream %s on %s: %w", name, s.url, hint(err))
		}
		found[name] = st
	}
	if err := s.checkSettings(replicas, found[s.names.stream], found[kvStream], found[objStream], found[s.names.keys]); err != nil {
		return err
	}

	where := fmt.Sprintf("stream %s on %s", s.names.stream, s.url)
	s.stream = found[s.names.stream]
	if s.stream == nil {
		s.created = true
		s.stream, err = js.CreateStream(ctx, logConfig(s.home, replicas))
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s.created = false
			s.stream, err = js.Stream(ctx, s.names.stream) // another client made it
		}
		if err != nil {
			return fmt.Errorf("jetstream: %s: %w", where, hint(err))
		}
		// Whoever made it, it is checked as a stream found would be.
		if err := s.checkSettings(replicas, s.stream, nil, nil, nil); err != nil {
			return err
		}
	}
	if found[kvStream] == nil {
		_, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      s.names.voyages,
			Description: "helm: the voyages of the home " + s.home + " and their summaries",
			History:     1,
			Storage:     jetstream.FileStorage,
			Replicas:    replicas,
		})
		if err != nil && !errors.Is(err, jetstream.ErrBucketExists) && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("jetstream: key-value bucket %s on %s: %w", s.names.voyages, s.url, hint(err))
		}
	}
	if found[objStream] == nil {
		_, err = js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      s.names.artifacts,
			Description: "helm: the large artifacts of the home " + s.home + ", by BLAKE3 address",
			Storage:     jetstream.FileStorage,
			Replicas:    replicas,
		})
		if err != nil && !errors.Is(err, jetstream.ErrBucketExists) && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("jetstream: object store %s on %s: %w", s.names.artifacts, s.url, hint(err))
		}
	}
	if found[kvStream] == nil || found[objStream] == nil {
		// Made here or by another client that came first: checked as
		// the ones found were.
		var kv, obj jetstream.Stream
		if kv, err = js.Stream(ctx, kvStream); err == nil {
			obj, err = js.Stream(ctx, objStream)
		}
		if err != nil {
			return fmt.Errorf("jetstream: the buckets of home %s on %s: %w", s.home, s.url, hint(err))
		}
		if err := s.checkSettings(replicas, nil, kv, obj, nil); err != nil {
			return err
		}
	}
	s.keys = found[s.names.keys]
	if s.keys == nil {
		s.keys, err = js.CreateStream(ctx, keysConfig(s.home, replicas))
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s.keys, err = js.Stream(ctx, s.names.keys) // another client made it
		}
		if err != nil {
			return fmt.Errorf("jetstream: the keys stream %s on %s: %w", s.names.keys, s.url, hint(err))
		}
		if err := s.checkSettings(replicas, nil, nil, nil, s.keys); err != nil {
			return err
		}
	}
	if s.kv, err = js.KeyValue(ctx, s.names.voyages); err != nil {
		return fmt.Errorf("jetstream: key-value bucket %s on %s: %w", s.names.voyages, s.url, hint(err))
	}
	if s.obs, err = js.ObjectStore(ctx, s.names.artifacts); err != nil {
		return fmt.Errorf("jetstream: object store %s on %s: %w", s.names.artifacts, s.url, hint(err))
	}
	return nil
}

// logConfig is the configuration of the units' stream of home that Open
// creates.
func logConfig(home string, replicas int) jetstream.StreamConfig {
	n := namesOf(home)
	return jetstream.StreamConfig{
		Name:              n.stream,
		Description:       "helm: the voyages of the home " + home + ", one subject each",
		Subjects:          []string{n.subjects},
		Storage:           jetstream.FileStorage,
		Replicas:          replicas,
		Retention:         jetstream.LimitsPolicy,
		Discard:           jetstream.DiscardNew,
		MaxMsgs:           -1,
		MaxBytes:          -1,
		MaxAge:            0,
		MaxMsgsPerSubject: -1,
		Duplicates:        2 * time.Minute,
		DenyDelete:        true,
		DenyPurge:         true,
	}
}

// checkSettings checks the settings of the home's streams (nil: not
// there) as the server gave them when they were looked up.
func (s *Store) checkSettings(replicas int, log, kv, obj, keys jetstream.Stream) error {
	var problems []Problem
	for _, st := range []struct {
		stream jetstream.Stream
		kind   streamKind
	}{{log, logStream}, {kv, bucketStream}, {obj, objectStream}, {keys, keysStream}} {
		if st.stream == nil {
			continue
		}
		subjects := s.names.subjects
		if st.kind == keysStream {
			subjects = s.names.keySubjects
		}
		problems = append(problems, check(st.stream.CachedInfo().Config, st.kind, subjects, replicas)...)
	}
	if len(problems) > 0 {
		return &SettingsError{Home: s.home, Server: s.url, Problems: problems}
	}
	return nil
}

// hint adds what to do to the errors a user can act on.
func hint(err error) error {
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount):
		return fmt.Errorf("%w (enable JetStream on the server: nats-server -js, or a jetstream block in its configuration)", err)
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w (is JetStream enabled there, and does the cluster have a leader?)", err)
	case errors.As(err, &apiErr) && apiErr.ErrorCode == 10005: // no suitable peers
		return fmt.Errorf("%w (a stream of more replicas than the cluster has servers? set replicas to what it has)", err)
	}
	return err
}

// replicas returns the replication factor of the home's stream as the
// server has it (it may have been made by another client).
func (s *Store) replicas() int {
	if info := s.stream.CachedInfo(); info != nil {
		return info.Config.Replicas
	}
	return 0
}

// Summaries are the values of the voyages bucket: the uvarint sequence
// number of the record the summary describes, then its bytes.
func encodeSummary(sum store.Summary) []byte {
	return append(binary.AppendUvarint(nil, sum.Seq), sum.Data...)
}

func decodeSummary(b []byte) (store.Summary, bool) {
	seq, n := binary.Uvarint(b)
	if n <= 0 {
		return store.Summary{}, false
	}
	return store.Summary{Seq: seq, Data: b[n:]}, true
}

// Create creates the voyage's key in the voyages bucket: one client of
// several that create one voyage gets it, the others ErrExists.
func (s *Store) Create(ctx context.Context, voyage string) (store.Log, error) {
	if err := checkName("voyage id", voyage); err != nil {
		return nil, err
	}
	rctx, cancel := s.ctx(ctx)
	defer cancel()
	if _, err := s.kv.Create(rctx, voyage, encodeSummary(store.Summary{})); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return nil, fmt.Errorf("%w: %s in bucket %s on %s", store.ErrExists, voyage, s.names.voyages, s.url)
		}
		return nil, fmt.Errorf("jetstream: create voyage %s in bucket %s on %s: %w", voyage, s.names.voyages, s.url, hint(err))
	}
	return s.newLog(voyage), nil
}

// Open opens the log of a voyage the voyages bucket holds.
func (s *Store) Open(ctx context.Context, voyage string) (store.Log, error) {
	if err := checkName("voyage id", voyage); err != nil {
		return nil, err
	}
	rctx, cancel := s.ctx(ctx)
	defer cancel()
	if err := s.retry(rctx, func(ctx context.Context) error { _, err := s.kv.Get(ctx, voyage); return err }); err != nil {
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			// A voyage whose key was deleted still has its units.
			l := s.newLog(voyage)
			if tail, terr := l.fetchTail(rctx); terr == nil && tail.stream != 0 {
				return nil, s.keyGone(voyage, 0)
			}
			return nil, fmt.Errorf("%w: %s in bucket %s on %s", store.ErrNotFound, voyage, s.names.voyages, s.url)
		}
		return nil, fmt.Errorf("jetstream: open voyage %s in bucket %s on %s: %w", voyage, s.names.voyages, s.url, hint(err))
	}
	return s.newLog(voyage), nil
}

// Voyages reads the voyages bucket's keys and values.
func (s *Store) Voyages(ctx context.Context) (map[string]store.Summary, error) {
	rctx, cancel := s.ctx(ctx)
	defer cancel()
	w, err := s.kv.WatchAll(rctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("jetstream: list the voyages of bucket %s on %s: %w", s.names.voyages, s.url, hint(err))
	}
	defer w.Stop()
	out := map[string]store.Summary{}
	for {
		select {
		case e := <-w.Updates():
			if e == nil { // the values held when the watch began are all in
				return out, nil
			}
			sum, ok := decodeSummary(e.Value())
			if !ok {
				return nil, &store.DamageError{Voyage: e.Key(), Where: fmt.Sprintf("bucket %s on %s, revision %d", s.names.voyages, s.url, e.Revision()), Reason: "the summary does not begin with the number of the record it describes"}
			}
			out[e.Key()] = store.Summary{Seq: sum.Seq, Data: bytes.Clone(sum.Data)}
		case <-rctx.Done():
			return nil, fmt.Errorf("jetstream: list the voyages of bucket %s on %s: %w", s.names.voyages, s.url, rctx.Err())
		}
	}
}

// List reads the voyages bucket (the summaries), then each voyage's last
// message (a request each, a few at once), then, in one request, how
// many messages the stream holds on each voyage's subject. A voyage whose
// subject holds fewer messages than its last unit's number (Helm-Unit)
// lost units, at its front or between others: a *DamageError. A voyage
// written before units were numbered has its first message read instead
// (a request more), which must hold record 1. A subject that holds
// messages while the bucket has no key for it is a voyage whose key was
// deleted or purged: a *DamageError too.
//
// The counts are read after the tails, so a unit appended meanwhile makes
// a count larger, never smaller, than the number read.
func (s *Store) List(ctx context.Context) (map[string]store.Listing, error) {
	sums, err := s.Voyages(ctx)
	if err != nil {
		return nil, err
	}
	rctx, cancel := s.ctx(ctx)
	defer cancel()
	ids := make([]string, 0, len(sums))
	for id := range sums {
		ids = append(ids, id)
	}
	tails := make([]point, len(ids))
	errs := make([]error, len(ids))
	each(rctx, len(ids), listWorkers, func(i int) {
		tails[i], errs[i] = s.newLog(ids[i]).fetchTail(rctx)
	})
	if err := rctx.Err(); err != nil {
		return nil, fmt.Errorf("jetstream: list the voyages of %s on %s: %w", s.names.stream, s.url, err)
	}
	var counts map[string]uint64
	err = s.retry(rctx, func(ctx context.Context) error {
		info, err := s.stream.Info(ctx, jetstream.WithSubjectFilter(s.names.subjects))
		if err == nil {
			counts = info.State.Subjects
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("jetstream: count the messages of each voyage of stream %s on %s: %w", s.names.stream, s.url, hint(err))
	}
	out := make(map[string]store.Listing, len(ids))
	for i, id := range ids {
		l := store.Listing{Summary: sums[id], Last: tails[i].first - 1, Err: errs[i]}
		if l.Err == nil {
			l.Err = s.newLog(id).counted(rctx, tails[i], counts[s.names.subject(id)])
		}
		if l.Err != nil {
			l.Last = 0
		}
		out[id] = l
	}
	for subject, n := range counts {
		id := strings.TrimPrefix(subject, s.names.prefix)
		if _, ok := sums[id]; ok || n == 0 {
			continue
		}
		// Made since the bucket was read, or its key is gone.
		_, err := s.kv.Get(rctx, id)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			out[id] = store.Listing{Err: s.keyGone(id, n)}
		}
	}
	return out, nil
}

// listWorkers is how many voyages' tails List reads at once.
const listWorkers = 16

// each calls fn(i) for i from 0 to n-1, workers at once, until ctx ends.
func each(ctx context.Context, n, workers int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, workers) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}

// keyGone is the damage of a voyage whose subject holds messages (n, if
// known) and whose key the voyages bucket no longer has.
func (s *Store) keyGone(voyage string, n uint64) error {
	held := "records"
	if n > 0 {
		held = fmt.Sprintf("%d units", n)
	}
	return &store.DamageError{Voyage: voyage, Where: fmt.Sprintf("bucket %s on %s", s.names.voyages, s.url),
		Reason: fmt.Sprintf("the voyage's key is gone (deleted or purged), but subject %s of stream %s holds %s of it: the voyage is there, unlisted", s.names.subject(voyage), s.names.stream, held)}
}

// counted checks the voyage's tail against n, the number of messages the
// stream holds on its subject: as many as its last unit's number. A
// voyage whose units have no number has its first message read, which
// must hold record 1.
func (l *log) counted(ctx context.Context, tail point, n uint64) error {
	switch {
	case tail.stream == 0:
		return nil // no message, no unit acknowledged
	case tail.units > 0:
		if n < tail.units {
			return l.damage(0, 0, fmt.Sprintf("the voyage's last message is unit %d, but the subject holds %d messages: %d of the units it acknowledged are gone (removed by a limit, a purge or a delete)", tail.units, n, tail.units-n))
		}
		return nil
	}
	var msg *jetstream.RawStreamMsg
	err := l.s.retry(ctx, func(ctx context.Context) (err error) {
		msg, err = l.s.stream.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(l.subject))
		return err
	})
	if err != nil {
		return fmt.Errorf("jetstream: the first record of voyage %s, %s: %w", l.voyage, l.where(), hint(err))
	}
	h, err := parseHeader(msg.Header)
	if err != nil {
		return l.damage(msg.Sequence, 1, "the voyage's first message: "+err.Error())
	}
	if h.first != 1 {
		return l.damage(msg.Sequence, 1, fmt.Sprintf("the voyage's first message holds records %d to %d: records 1 to %d, which it acknowledged, are gone (removed by a limit, a purge or a delete)", h.first, h.last(), h.first-1))
	}
	return nil
}

// PutSummary compares and sets the voyage's value in the voyages bucket
// until it holds sum or a summary of a later record.
func (s *Store) PutSummary(ctx context.Context, voyage string, sum store.Summary) error {
	if err := checkName("voyage id", voyage); err != nil {
		return err
	}
	rctx, cancel := s.ctx(ctx)
	defer cancel()
	where := fmt.Sprintf("bucket %s on %s", s.names.voyages, s.url)
	for {
		var e jetstream.KeyValueEntry
		err := s.retry(rctx, func(ctx context.Context) (err error) { e, err = s.kv.Get(ctx, voyage); return err })
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return fmt.Errorf("%w: %s in %s", store.ErrNotFound, voyage, where)
		}
		if err != nil {
			return fmt.Errorf("jetstream: summary of voyage %s in %s: %w", voyage, where, hint(err))
		}
		if old, ok := decodeSummary(e.Value()); ok && old.Seq > sum.Seq {
			return nil
		}
		_, err = s.kv.Update(rctx, voyage, encodeSummary(sum), e.Revision())
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || isWrongLast(err) {
			continue // another writer's summary came between: compare again
		}
		if err != nil {
			return fmt.Errorf("jetstream: summary of voyage %s in %s: %w", voyage, where, hint(err))
		}
		return nil
	}
}

// Artifacts returns the voyage's large artifacts, in the home's object
// store.
func (s *Store) Artifacts(voyage string) store.Artifacts {
	return &artifacts{s: s, voyage: voyage}
}

// Close closes the connection to the server.
func (s *Store) Close() error {
	s.nc.Close()
	return nil
}

// isWrongLast reports whether err is the server's "wrong last sequence":
// 10071, or 10164 as newer servers say it of replicated streams.
func isWrongLast(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

package main

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/mattn/go-sqlite3"
	"github.com/zeebo/blake3"

	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// The SQLite side reproduces ADR 004 (seed 001): one database file per
// voyage, its schema, and its transactions — each observe is one
// transaction (artifact INSERT OR IGNORE, slate INSERT OR REPLACE), each
// bearing one transaction (logbook row, slate copied to
// bearing_observations, slate cleared). Two deliberate differences, both to
// compare like with like: artifacts are addressed by BLAKE3 (as helm does)
// rather than SHA-256, and compressed with the same zstd level as helm
// (klauspost/compress, SpeedDefault).
const sqliteSchema = `
PRAGMA user_version = 1;

CREATE TABLE voyage (
    id           TEXT PRIMARY KEY,
    intent       TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    status       TEXT NOT NULL CHECK(status IN ('active', 'ended')),
    ended_at     TEXT,
    ended_status TEXT
);

CREATE TABLE artifacts (
    hash   TEXT PRIMARY KEY,
    data   BLOB NOT NULL,
    status TEXT NOT NULL DEFAULT 'stowed' CHECK(status IN ('stowed', 'reduced', 'jettisoned'))
);

CREATE TABLE artifact_derivations (
    source_hash  TEXT NOT NULL REFERENCES artifacts(hash),
    derived_hash TEXT NOT NULL REFERENCES artifacts(hash),
    method       TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (source_hash, derived_hash)
);

CREATE TABLE slate (
    target        TEXT PRIMARY KEY,
    artifact_hash TEXT NOT NULL REFERENCES artifacts(hash),
    observed_at   TEXT NOT NULL
);

CREATE TABLE logbook (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    recorded_at TEXT NOT NULL,
    identity    TEXT NOT NULL,
    action      TEXT NOT NULL,
    summary     TEXT NOT NULL,
    role        TEXT NOT NULL,
    method      TEXT NOT NULL
);

CREATE TABLE bearing_observations (
    logbook_id    INTEGER NOT NULL REFERENCES logbook(id),
    target        TEXT NOT NULL,
    artifact_hash TEXT NOT NULL REFERENCES artifacts(hash),
    observed_at   TEXT NOT NULL
);
`

const (
	sqlInsertArtifact = `INSERT OR IGNORE INTO artifacts (hash, data) VALUES (?, ?)`
	sqlUpsertSlate    = `INSERT OR REPLACE INTO slate (target, artifact_hash, observed_at) VALUES (?, ?, ?)`
	sqlInsertLogbook  = `INSERT INTO logbook (recorded_at, identity, action, summary, role, method) VALUES (?, ?, ?, ?, ?, ?)`
	sqlCopySlate      = `INSERT INTO bearing_observations (logbook_id, target, artifact_hash, observed_at) SELECT ?, target, artifact_hash, observed_at FROM slate`
	sqlClearSlate     = `DELETE FROM slate`
)

var sqliteZstd, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))

// sqliteVoyage is one voyage's database.
type sqliteVoyage struct {
	path string
	db   *sql.DB
	stmt [5]*sql.Stmt
}

// sqliteDSN: foreign keys on every connection, WAL, synchronous=FULL;
// BEGIN IMMEDIATE so that concurrent writers wait in busy_timeout for the
// write lock instead of failing to upgrade a read transaction.
func sqliteDSN(path string) string {
	return "file:" + path + "?_foreign_keys=on&_journal_mode=WAL&_synchronous=FULL&_busy_timeout=10000&_txlock=immediate"
}

// createSQLiteVoyage creates the voyage's database file with its schema
// and voyage row; conns is how many connections may be open at once.
func createSQLiteVoyage(path string, conns int) (*sqliteVoyage, error) {
	db, err := sql.Open("sqlite3", sqliteDSN(path))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(0)
	if _, err := db.Exec(sqliteSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("create schema in %s: %w", path, err)
	}
	var fk int
	if err := db.QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		db.Close()
		return nil, fmt.Errorf("foreign keys are not enforced on %s (%v)", path, err)
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		db.Close()
		return nil, fmt.Errorf("journal mode of %s is %q, not wal (%v)", path, mode, err)
	}
	var syncMode int
	if err := db.QueryRow(`PRAGMA synchronous`).Scan(&syncMode); err != nil || syncMode != 2 {
		db.Close()
		return nil, fmt.Errorf("synchronous of %s is %d, not FULL (2) (%v)", path, syncMode, err)
	}
	if _, err := db.Exec(`INSERT INTO voyage (id, intent, created_at, status) VALUES (?, ?, ?, 'active')`,
		"bench", "bench voyage", now()); err != nil {
		db.Close()
		return nil, err
	}
	v := &sqliteVoyage{path: path, db: db}
	for i, q := range []string{sqlInsertArtifact, sqlUpsertSlate, sqlInsertLogbook, sqlCopySlate, sqlClearSlate} {
		if v.stmt[i], err = db.Prepare(q); err != nil {
			db.Close()
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
	}
	// Open every connection now (each applies the DSN's pragmas), so the
	// timed part does not.
	var conn []*sql.Conn
	for range conns {
		c, err := db.Conn(context.Background())
		if err != nil {
			db.Close()
			return nil, err
		}
		conn = append(conn, c)
	}
	for _, c := range conn {
		c.Close()
	}
	return v, nil
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// do runs op as one transaction, starting over while SQLite says the
// database is busy (after busy_timeout has run out).
func (v *sqliteVoyage) do(ctx context.Context, op Op) error {
	for {
		err := v.tx(ctx, op)
		var se sqlite3.Error
		if errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked) {
			continue
		}
		return err
	}
}

func (v *sqliteVoyage) tx(ctx context.Context, op Op) (err error) {
	if op.Bearing {
		action, _ := json.Marshal(map[string]any{"bearing": map[string]string{"reading": op.Reading}})
		return v.inTx(ctx, func(tx *sql.Tx) error {
			res, err := tx.Stmt(v.stmt[2]).Exec(now(), who.Identity, string(action), op.Reading, who.Role, who.Method)
			if err != nil {
				return err
			}
			id, err := res.LastInsertId()
			if err != nil {
				return err
			}
			if _, err := tx.Stmt(v.stmt[3]).Exec(id); err != nil {
				return err
			}
			_, err = tx.Stmt(v.stmt[4]).Exec()
			return err
		})
	}
	// What helm does before its write: encode the mark and the sighting,
	// hash the sighting's JSON, compress it.
	target, err := marks.Marshal(op.Mark)
	if err != nil {
		return err
	}
	data, err := sighting.Marshal(op.Sighting)
	if err != nil {
		return err
	}
	sum := blake3.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	z := sqliteZstd.EncodeAll(data, make([]byte, 0, len(data)/2))
	return v.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.Stmt(v.stmt[0]).Exec(hash, z); err != nil {
			return err
		}
		_, err := tx.Stmt(v.stmt[1]).Exec(string(target), hash, now())
		return err
	})
}

func (v *sqliteVoyage) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := v.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// checkpoint moves the WAL into the database file and truncates it.
func (v *sqliteVoyage) checkpoint() error {
	_, err := v.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// bytes is the size of the database and its -wal and -shm files.
func (v *sqliteVoyage) bytes() int64 {
	var n int64
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if st, err := os.Stat(v.path + suffix); err == nil {
			n += st.Size()
		}
	}
	return n
}

func (v *sqliteVoyage) close() error { return v.db.Close() }

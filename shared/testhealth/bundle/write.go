package bundle

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
)

// WriteInput is what Write puts in a bundle.
type WriteInput struct {
	// Meta is written as meta.json. Org, Repo.Host, Repo.Owner, Repo.Name
	// and BundleUploadID are required, as Read requires them.
	Meta Meta
	// JUnit are the reports, written as junit/0, junit/1, ... in order.
	JUnit []File
	// Codeowners is written as CODEOWNERS; nil writes none.
	Codeowners []byte
}

// File is one JUnit report to bundle.
type File struct {
	// OriginalPath is where the report was found, recorded in meta.json's
	// file_sets as the uploader records it.
	OriginalPath string
	// Body is the report's content.
	Body []byte
	// ModTime is the report's modification time; zero writes 0.
	ModTime time.Time
}

// The meta.json shapes below follow the uploader's BundleMetaV0_7_8 field
// for field and in its order, so that a bundle from Write is
// indistinguishable from the uploader's to any reader, ours or not.
type writeMeta struct {
	Version          string            `json:"version"`
	CLIVersion       string            `json:"cli_version"`
	Org              string            `json:"org"`
	Repo             writeRepo         `json:"repo"`
	BundleUploadID   string            `json:"bundle_upload_id"`
	Tags             []tagJSON         `json:"tags"`
	FileSets         []writeFileSet    `json:"file_sets"`
	Envs             map[string]string `json:"envs"`
	UploadTimeEpoch  int64             `json:"upload_time_epoch"`
	TestCommand      *string           `json:"test_command"`
	OSInfo           string            `json:"os_info"`
	QuarantinedTests []struct{}        `json:"quarantined_tests"`
	Codeowners       *writeCodeowners  `json:"codeowners"`
	NumFiles         int               `json:"num_files"`
	NumTests         int               `json:"num_tests"`
	CommandLine      string            `json:"command_line"`
	TrunkEnvs        map[string]string `json:"trunk_envs"`
	BundleUploadIDV2 string            `json:"bundle_upload_id_v2"`
	Variant          string            `json:"variant"`
	FailedTests      []struct{}        `json:"failed_tests"`
}

type writeRepo struct {
	Repo struct {
		Host  string `json:"host"`
		Owner string `json:"owner"`
		Name  string `json:"name"`
	} `json:"repo"`
	RepoRoot          string `json:"repo_root"`
	RepoURL           string `json:"repo_url"`
	HeadSHA           string `json:"repo_head_sha"`
	HeadSHAShort      string `json:"repo_head_sha_short"`
	HeadBranch        string `json:"repo_head_branch"`
	HeadCommitEpoch   int64  `json:"repo_head_commit_epoch"`
	HeadCommitMessage string `json:"repo_head_commit_message"`
	HeadAuthorName    string `json:"repo_head_author_name"`
	HeadAuthorEmail   string `json:"repo_head_author_email"`
}

type writeFileSet struct {
	FileSetType string      `json:"file_set_type"`
	Files       []writeFile `json:"files"`
	Glob        string      `json:"glob"`
}

type writeFile struct {
	OriginalPath        string   `json:"original_path"`
	OriginalPathRel     string   `json:"original_path_rel"`
	Path                string   `json:"path"`
	LastModifiedEpochNS int64    `json:"last_modified_epoch_ns"`
	Owners              []string `json:"owners"`
	Team                *string  `json:"team"`
}

type writeCodeowners struct {
	Path string `json:"path"`
}

// unix is t in seconds, 0 for the zero time (the uploader's "unknown").
func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// Write writes a bundle to w laid out exactly as the public uploader lays
// it out: a zstd stream (best compression, standing in for the uploader's
// level 15) of a tar archive holding meta.json, junit/0, junit/1, ... and,
// when in.Codeowners is not nil, CODEOWNERS. meta.json carries every field
// the uploader writes, those Meta has no value for written as the uploader
// writes them when empty. Write refuses a Meta that Read would refuse, so
// that it never produces a bundle the service cannot ingest.
func Write(w io.Writer, in WriteInput) error {
	m := in.Meta
	switch {
	case m.Org == "", m.Repo.Host == "", m.Repo.Owner == "", m.Repo.Name == "", m.BundleUploadID == "":
		return errors.New("bundle: Write needs Meta.Org, Meta.Repo.Host, Owner, Name and Meta.BundleUploadID")
	case utf8.RuneCountInString(m.Variant) > MaxVariantLen:
		return fmt.Errorf("bundle: variant is longer than %d characters", MaxVariantLen)
	}
	meta, err := json.Marshal(metaFor(in))
	if err != nil {
		return fmt.Errorf("bundle: encoding meta.json: %w", err)
	}
	zw, err := encoder(w)
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	defer release(zw)
	tw := tar.NewWriter(zw)
	now := m.UploadTime
	if now.IsZero() {
		now = time.Unix(0, 0)
	}
	add := func(name string, body []byte, mod time.Time) error {
		if mod.IsZero() {
			mod = now
		}
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: mod, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	err = add("meta.json", meta, now)
	for i, f := range in.JUnit {
		if err != nil {
			break
		}
		err = add("junit/"+strconv.Itoa(i), f.Body, f.ModTime)
	}
	if err == nil && in.Codeowners != nil {
		err = add("CODEOWNERS", in.Codeowners, now)
	}
	if err == nil {
		err = tw.Close()
	}
	// Close the stream even after a failure, so the encoder can be reused.
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("bundle: writing: %w", err)
	}
	return nil
}

func metaFor(in WriteInput) writeMeta {
	m := in.Meta
	wm := writeMeta{
		Version:          "1",
		CLIVersion:       m.CLIVersion,
		Org:              m.Org,
		BundleUploadID:   m.BundleUploadID,
		Tags:             []tagJSON{},
		FileSets:         []writeFileSet{},
		Envs:             m.Envs,
		UploadTimeEpoch:  unix(m.UploadTime),
		OSInfo:           runtime.GOOS,
		QuarantinedTests: []struct{}{},
		NumFiles:         len(in.JUnit),
		TrunkEnvs:        map[string]string{},
		Variant:          m.Variant,
		FailedTests:      []struct{}{},
	}
	if m.Version != "" {
		wm.Version = m.Version
	}
	if wm.Envs == nil {
		wm.Envs = map[string]string{}
	}
	wm.Repo.Repo.Host, wm.Repo.Repo.Owner, wm.Repo.Repo.Name = m.Repo.Host, m.Repo.Owner, m.Repo.Name
	wm.Repo.RepoURL = m.Repo.URL
	wm.Repo.HeadSHA = m.Repo.HeadSHA
	wm.Repo.HeadSHAShort = m.Repo.HeadSHA[:min(7, len(m.Repo.HeadSHA))]
	wm.Repo.HeadBranch = m.Repo.HeadBranch
	wm.Repo.HeadCommitEpoch = unix(m.Repo.HeadCommitTime)
	for _, t := range m.Tags {
		wm.Tags = append(wm.Tags, tagJSON(t))
	}
	// The uploader makes one file set per --junit-paths glob; a path given
	// literally is a glob matching itself, which is what we model.
	for i, f := range in.JUnit {
		wm.FileSets = append(wm.FileSets, writeFileSet{
			FileSetType: "Junit",
			Glob:        f.OriginalPath,
			Files: []writeFile{{
				OriginalPath:        f.OriginalPath,
				OriginalPathRel:     f.OriginalPath,
				Path:                "junit/" + strconv.Itoa(i),
				LastModifiedEpochNS: unixNano(f.ModTime),
				Owners:              []string{},
			}},
		})
	}
	if in.Codeowners != nil {
		wm.Codeowners = &writeCodeowners{Path: "CODEOWNERS"}
	}
	return wm
}

// encoders keeps up to four zstd encoders for reuse: a best-compression
// encoder allocates megabytes of tables, which a process writing many
// bundles (a test suite, a CI job uploading per shard) would otherwise
// allocate and collect for each. (A sync.Pool would be emptied by the very
// collections these allocations cause.)
var encoders = make(chan *zstd.Encoder, 4)

// encoder is a kept encoder writing to w, or a new one.
func encoder(w io.Writer) (*zstd.Encoder, error) {
	select {
	case zw := <-encoders:
		zw.Reset(w)
		return zw, nil
	default:
		return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
	}
}

// release keeps zw for reuse, if there is room.
func release(zw *zstd.Encoder) {
	zw.Reset(io.Discard) // let go of the bundle just written
	select {
	case encoders <- zw:
	default:
	}
}

package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/web"
	"github.com/helmlog/helm/internal/webtest"
)

// streamsUnderWay counts the goroutines still inside an event stream's
// handler: the handler itself and its keep-alive.
func streamsUnderWay() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "internal/web.(*Server).events") {
			count++
		}
	}
	return count
}

// waitNoStreams waits until no goroutine is inside an event stream,
// failing only past a bound no healthy server comes near.
func waitNoStreams(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for streamsUnderWay() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines are still in an event stream 30 s after every client left", streamsUnderWay())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// openStream opens the voyage's event stream and reads its first line,
// the comment that says the stream is followed.
func openStream(t *testing.T, ctx context.Context, client *http.Client, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		return resp, ""
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	return resp, line
}

// TestServeSurvivesADisconnectStorm: hundreds of clients open a voyage's
// event stream and leave at random moments, before the answer, during the
// first line, or while updates and keep-alives (one a millisecond) are
// written, as notes are appended to the voyage. The server neither
// panics nor writes to a finished response (-race sees both), answers a
// page and a new stream afterwards, and no stream is left running.
func TestServeSurvivesADisconnectStorm(t *testing.T) {
	const clients, concurrent = 400, 100
	s, err := webtest.Seed(context.Background(), t.TempDir())
	require.NoError(t, err)
	ts := serve(t, s.Dir, &web.Options{KeepAlive: time.Millisecond, MaxStreams: concurrent})
	url := ts.URL + "/voyages/" + s.Main + "/events"
	transport := &http.Transport{MaxConnsPerHost: concurrent, MaxIdleConnsPerHost: concurrent}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}

	h, err := helm.Open(s.Dir, nil)
	require.NoError(t, err)
	v, err := h.Voyage(context.Background(), s.Main)
	require.NoError(t, err)
	defer v.Close()
	stormOver := make(chan struct{})
	appended := make(chan error, 1)
	go func() {
		defer close(appended)
		for i := 0; i < 500; i++ {
			select {
			case <-stormOver:
				return
			default:
			}
			if _, err := v.Note(context.Background(), fmt.Sprintf("note %d, written during the storm", i), webtest.Ann); err != nil {
				appended <- err
				return
			}
		}
	}()

	var (
		wg       sync.WaitGroup
		slots    = make(chan struct{}, concurrent)
		mu       sync.Mutex
		statuses = map[int]int{}
	)
	for i := range clients {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			// A client in eight leaves in its first 5 ms, mostly before
			// the answer; the others within 30 ms of its headers.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if i%8 == 0 {
				defer time.AfterFunc(time.Duration(rand.IntN(5_000))*time.Microsecond, cancel).Stop()
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				t.Error(err)
				return
			}
			resp, err := client.Do(req)
			if err != nil {
				return // left before the answer
			}
			defer resp.Body.Close()
			mu.Lock()
			statuses[resp.StatusCode]++
			mu.Unlock()
			defer time.AfterFunc(time.Duration(rand.IntN(30_000))*time.Microsecond, cancel).Stop()
			if i%4 == 1 {
				return // leaves at once, without reading
			}
			_, _ = io.Copy(io.Discard, resp.Body) // until it leaves
		})
	}
	wg.Wait()
	close(stormOver)
	require.NoError(t, <-appended)
	t.Logf("answers during the storm: %v", statuses)
	for status := range statuses {
		assert.Contains(t, []int{http.StatusOK, http.StatusServiceUnavailable}, status)
	}

	status, _, body := get(t, ts, "/voyages/"+s.Main)
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "written during the storm")
	ctx, cancel := context.WithCancel(context.Background())
	resp, line := openStream(t, ctx, client, url)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, line, ": following voyage "+s.Main)
	cancel()
	resp.Body.Close()
	transport.CloseIdleConnections()
	waitNoStreams(t)
}

// TestStreamsOverTheCapAreRefusedWithAReason: with MaxStreams 2, a third
// stream is answered 503 with a page that says why and what to do; once
// a stream ends, its place is free again.
func TestStreamsOverTheCapAreRefusedWithAReason(t *testing.T) {
	s, err := webtest.Seed(context.Background(), t.TempDir())
	require.NoError(t, err)
	ts := serve(t, s.Dir, &web.Options{MaxStreams: 2})
	url := ts.URL + "/voyages/" + s.Main + "/events"
	client := ts.Client()

	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	first, _ := openStream(t, ctx1, client, url)
	defer first.Body.Close()
	require.Equal(t, http.StatusOK, first.StatusCode)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	second, _ := openStream(t, ctx2, client, url)
	defer second.Body.Close()
	require.Equal(t, http.StatusOK, second.StatusCode)

	status, h, body := get(t, ts, "/voyages/"+s.Main+"/events")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Contains(t, body, "too many live pages: this server follows at most 2 event streams at once")
	assert.Contains(t, body, "close other pages (tabs) following a voyage")
	assert.Contains(t, body, "or serve with a larger MaxStreams")
	assert.NotEmpty(t, h.Get("Retry-After"))
	assert.Equal(t, web.CSP, h.Get("Content-Security-Policy"))

	status, _, _ = get(t, ts, "/voyages/"+s.Main)
	assert.Equal(t, http.StatusOK, status, "pages are served whatever the streams")

	cancel1()
	first.Body.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithCancel(context.Background())
		resp, line := openStream(t, ctx, client, url)
		got := resp.StatusCode
		cancel()
		resp.Body.Close()
		if got == http.StatusOK {
			assert.Contains(t, line, ": following voyage")
			break
		}
		require.Equal(t, http.StatusServiceUnavailable, got)
		require.False(t, time.Now().After(deadline), "the ended stream's place was not freed in 30 s")
		time.Sleep(5 * time.Millisecond)
	}
}

// TestNegativeStreamOptionsAreRefused: a negative cap or keep-alive is a
// mistake, not a default.
func TestNegativeStreamOptionsAreRefused(t *testing.T) {
	h, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		opts web.Options
		want string
	}{
		{"max streams", web.Options{MaxStreams: -1}, "MaxStreams is -1"},
		{"keep-alive", web.Options{KeepAlive: -time.Second}, "KeepAlive is -1s"},
		{"write timeout", web.Options{WriteTimeout: -time.Second}, "WriteTimeout is -1s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := web.New(h, &tt.opts)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

// TestAStreamWhoseClientStopsReadingEnds: a client that keeps its
// connection open but reads nothing cannot hold a stream for good: once
// a write has blocked for WriteTimeout the stream ends and its place
// (the only one here) goes to the next page.
func TestAStreamWhoseClientStopsReadingEnds(t *testing.T) {
	s, err := webtest.Seed(context.Background(), t.TempDir())
	require.NoError(t, err)
	ts := serve(t, s.Dir, &web.Options{MaxStreams: 1, KeepAlive: time.Millisecond, WriteTimeout: 50 * time.Millisecond})
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "GET /voyages/%s/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", s.Main)
	require.NoError(t, err)
	// What it reads: the headers' first bytes, then nothing more.
	_, err = conn.Read(make([]byte, 16))
	require.NoError(t, err)

	h, err := helm.Open(s.Dir, nil)
	require.NoError(t, err)
	v, err := h.Voyage(context.Background(), s.Main)
	require.NoError(t, err)
	defer v.Close()
	big := strings.Repeat("a long line the client never reads ", 2000)
	for i := 0; streamsUnderWay() > 0; i++ {
		require.Less(t, i, 2000, "the stream still runs after 2000 notes of 70 kB nobody read")
		_, err := v.Note(context.Background(), fmt.Sprintf("note %d: %s", i, big), webtest.Ann)
		require.NoError(t, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, line := openStream(t, ctx, ts.Client(), ts.URL+"/voyages/"+s.Main+"/events")
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the stuck stream's place is free")
	assert.Contains(t, line, ": following voyage")
}

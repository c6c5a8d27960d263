// examples/docker-compose.postgres.yml, run: its replicas' settings start
// paymock on one database, each on the port the file publishes it on, and
// what one replica creates the other serves; each replica's checkout
// links open on its published port.

package postgres_test

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/paymock/paymock/internal/composetest"
	"github.com/paymock/paymock/internal/pgtest"
)

func TestComposeExample_ItsReplicasShareTheDatabase(t *testing.T) {
	// The replicas publish on ports of this test's, not the default 8081
	// and 8082: each listens on the port the file publishes it on, as
	// docker would publish it, and the checkout links the file derives
	// from it must open there.
	ports := map[string]string{"PAYMOCK_1_PORT": freePort(t), "PAYMOCK_2_PORT": freePort(t)}
	var file struct {
		Services map[string]struct {
			Build       map[string]any    `yaml:"build"`
			Image       string            `yaml:"image"`
			Environment map[string]string `yaml:"environment"`
			DependsOn   map[string]any    `yaml:"depends_on"`
			Ports       []string          `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := composetest.Read("../examples/docker-compose.postgres.yml", ports, &file); err != nil {
		t.Fatal(err)
	}
	var names []string
	for name, s := range file.Services {
		if s.Build["dockerfile"] == "Dockerfile" {
			names = append(names, name)
			if s.DependsOn["postgres"] == nil || len(s.Ports) != 1 {
				t.Errorf("%s: depends_on %v, ports %v", name, s.DependsOn, s.Ports)
			}
		}
	}
	slices.Sort(names)
	// The image is ${POSTGRES_IMAGE:-postgres:17}: a local one where no
	// registry is reachable.
	if len(names) != 2 || !strings.Contains(file.Services["postgres"].Image, "postgres:") {
		t.Fatalf("services %v: want two paymock replicas and postgres", names)
	}
	// One image name for both replicas: compose tags one image for them.
	if img := file.Services[names[0]].Image; img == "" || file.Services[names[1]].Image != img {
		t.Errorf("the replicas' images: %q and %q, want one name", img, file.Services[names[1]].Image)
	}
	published := map[string]bool{}
	for _, name := range names {
		published[composetest.HostPort(file.Services[name].Ports[0])] = true
	}
	if !published[ports["PAYMOCK_1_PORT"]] || !published[ports["PAYMOCK_2_PORT"]] {
		t.Fatalf("the replicas publish on %v, want PAYMOCK_1_PORT and PAYMOCK_2_PORT, %v", published, ports)
	}
	// Each replica with the file's environment, on a test database in
	// place of the compose network's.
	db := pgtest.URL(t)
	var rs []*process
	var key string
	for _, name := range names {
		env := file.Services[name].Environment
		store, err := url.Parse(env["PAYMOCK_STORE"])
		if err != nil || store.Scheme != "postgres" || store.Host != "postgres:5432" {
			t.Fatalf("%s: PAYMOCK_STORE %q", name, env["PAYMOCK_STORE"])
		}
		var kv []string
		for k, v := range env {
			if k == "PAYMOCK_STORE" {
				v = db
			}
			kv = append(kv, k+"="+v)
		}
		port := composetest.HostPort(file.Services[name].Ports[0])
		p := startWith(t, kv, "--addr", "127.0.0.1:"+port)
		p.port = port
		key = env["PAYMOCK_API_KEY"]
		p.key = key
		rs = append(rs, p)
	}
	if key == "" {
		t.Fatal("no PAYMOCK_API_KEY in the file")
	}
	id := rs[0].create(60, nil)
	if st, p := rs[1].call("GET", "/api/v1/payments/"+id, nil); st != http.StatusOK || p["id"] != id {
		t.Errorf("retrieve on the second replica: %d %v", st, p)
	}
	// Each replica's checkout link, as a browser on the host opens it.
	for i, r := range rs {
		st, p := r.call("POST", "/api/v1/payments", createBody(60, nil))
		next, _ := p["next_action"].(map[string]any)
		link, _ := next["url"].(string)
		if u, err := url.Parse(link); st != http.StatusCreated || err != nil || u.Host != "localhost:"+r.port {
			t.Errorf("%s: a payment's next_action.url %q (%d), want it on the published port %s", names[i], link, st, r.port)
			continue
		}
		resp, err := http.Get(link)
		if err != nil {
			t.Errorf("%s: opening %s: %v", names[i], link, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %s answered %d", names[i], link, resp.StatusCode)
		}
	}
}

// freePort is a loopback port nothing listens on right now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

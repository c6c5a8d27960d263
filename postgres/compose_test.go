// examples/docker-compose.postgres.yml, run: its replicas' settings start
// paymock on one database, and what one replica creates the other serves.

package postgres_test

import (
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/paymock/paymock/internal/pgtest"
	"gopkg.in/yaml.v3"
)

func TestComposeExample_ItsReplicasShareTheDatabase(t *testing.T) {
	raw, err := os.ReadFile("../examples/docker-compose.postgres.yml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Services map[string]struct {
			Build       map[string]any    `yaml:"build"`
			Image       string            `yaml:"image"`
			Environment map[string]string `yaml:"environment"`
			DependsOn   map[string]any    `yaml:"depends_on"`
			Ports       []string          `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
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
		p := startWith(t, kv)
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
}

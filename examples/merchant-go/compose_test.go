// The settings of ../docker-compose.yml run for real, without docker: the
// paymock binary with the paymock service's environment, on the port the
// file publishes, the shop with the app's, an order paid through them
// (its checkout link opened), and the report gate at the end. And the
// shape of ../github-actions.yml: its last step is that gate, but for the
// upload of the JUnit report the gate writes to a mounted folder.

package shop_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/paymock/paymock/internal/composetest"
	"github.com/paymock/paymock/sandbox"

	shop "github.com/paymock/paymock/examples/merchant-go"
)

type composeFile struct {
	Services map[string]struct {
		Build struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
	} `yaml:"services"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// freeAddr is a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// buildPaymock builds the paymock binary of this checkout, in its own
// module (as the Dockerfile does).
func buildPaymock(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "paymock")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/paymock")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build paymock: %v\n%s", err, out)
	}
	return bin
}

func TestDockerCompose_TheAppGetsPaid(t *testing.T) {
	// PAYMOCK_PORT is a port of this test's, not the default 8080: paymock
	// listens on the port the file publishes, as docker would publish it,
	// and the checkout link the file derives from it must open there.
	_, port, _ := net.SplitHostPort(freeAddr(t))
	var cf composeFile
	if err := composetest.Read("../docker-compose.yml", map[string]string{"PAYMOCK_PORT": port}, &cf); err != nil {
		t.Fatal(err)
	}
	pm, app := cf.Services["paymock"], cf.Services["app"]
	if len(pm.Ports) != 1 || composetest.HostPort(pm.Ports[0]) != port {
		t.Fatalf("paymock publishes %q, want PAYMOCK_PORT %s", pm.Ports, port)
	}
	for _, b := range []struct{ ctx, file string }{{pm.Build.Context, pm.Build.Dockerfile}, {app.Build.Context, app.Build.Dockerfile}} {
		if _, err := os.Stat(filepath.Join("..", b.ctx, b.file)); err != nil {
			t.Errorf("a build of docker-compose.yml: %v", err)
		}
	}

	// The app, as the app service configures it; "paymock:8080" is the
	// binary started below.
	paymockAddr := "127.0.0.1:" + port
	env := func(name string) string {
		return strings.ReplaceAll(app.Environment[name], "paymock:8080", paymockAddr)
	}
	sh, err := shop.New(shop.ConfigFromEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	appSrv := &http.Server{Handler: sh.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = appSrv.Serve(ln) }()
	t.Cleanup(func() { _ = appSrv.Close() })

	// paymock, as the paymock service configures it; "app:8000" is the
	// shop above.
	bin := buildPaymock(t)
	cmd := exec.Command(bin, "--log-level", "warn")
	cmd.Env = append(os.Environ(), "PAYMOCK_ADDR="+paymockAddr)
	for k, v := range pm.Environment {
		cmd.Env = append(cmd.Env, k+"="+strings.ReplaceAll(v, "app:8000", ln.Addr().String()))
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := "http://" + paymockAddr
	waitUntil(t, "paymock answers /healthz", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})

	resp, err := http.Post("http://"+ln.Addr().String()+"/orders", "application/json",
		strings.NewReader(`{"id":"ord_1","amount":"10.50","currency":"EUR","email":"jane@example.com","name":"Jane"}`))
	if err != nil {
		t.Fatal(err)
	}
	var o shop.Order
	err = json.NewDecoder(resp.Body).Decode(&o)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /orders: %d %v", resp.StatusCode, err)
	}
	// The customer's link, as a browser on the host would open it.
	if u, err := url.Parse(o.PaymentURL); err != nil || u.Host != "localhost:"+port {
		t.Errorf("payment_url %q is not on the published port %s", o.PaymentURL, port)
	} else {
		page, err := http.Get(o.PaymentURL)
		if err != nil {
			t.Errorf("opening payment_url: %v", err)
		} else {
			body, _ := io.ReadAll(page.Body)
			page.Body.Close()
			if page.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-action="pay"`) {
				t.Errorf("payment_url %s: %d, no pay button:\n%s", o.PaymentURL, page.StatusCode, body)
			}
		}
	}
	c, err := sandbox.NewClient(sandbox.ClientConfig{URL: base, APIKey: app.Environment["PAYMENTS_API_KEY"]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(t.Context(), o.PaymentID); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the order is paid", func() bool {
		got, _ := sh.Order("ord_1")
		return got.Status == shop.Paid
	})

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	report := exec.CommandContext(ctx, bin, "report", "--url", base, "--api-key", app.Environment["PAYMENTS_API_KEY"], "--fail-on-violations")
	if out, err := report.CombinedOutput(); err != nil {
		t.Errorf("the report gate: %v\n%s", err, out)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting until %s", what)
}

func TestGitHubActions_EndsWithTheContractGate(t *testing.T) {
	var wf struct {
		Jobs map[string]struct {
			Services map[string]struct {
				Image string            `yaml:"image"`
				Env   map[string]string `yaml:"env"`
			} `yaml:"services"`
			Env   map[string]string `yaml:"env"`
			Steps []struct {
				Name string            `yaml:"name"`
				Run  string            `yaml:"run"`
				If   string            `yaml:"if"`
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	readYAML(t, "../github-actions.yml", &wf)
	job, ok := wf.Jobs["contract"]
	if !ok || len(job.Steps) == 0 {
		t.Fatalf("no contract job with steps")
	}
	svc := job.Services["paymock"]
	if !strings.Contains(svc.Image, "needs.paymock-image.outputs.image") {
		t.Errorf("the service runs %q, want the image the first job built", svc.Image)
	}
	if svc.Env["PAYMOCK_API_KEY"] != job.Env["PAYMENTS_API_KEY"] || svc.Env["PAYMOCK_WEBHOOK_SECRET"] != job.Env["WEBHOOK_SECRET"] {
		t.Errorf("the app and paymock disagree on the key or the webhook secret")
	}
	// The gate is the last step that runs anything; only the upload of its
	// JUnit report may follow, and that whatever the gate said.
	gate := -1
	for i, s := range job.Steps {
		if s.Run != "" {
			gate = i
		}
	}
	if gate < 0 {
		t.Fatal("no step runs anything")
	}
	last := job.Steps[gate].Run
	// The JUnit file is written to a folder of the runner's, mounted, by
	// the runner's user: inside the --rm container alone it would be lost,
	// and the image's uid 65532 may not write to the runner's folder.
	for _, want := range []string{" report ", "--fail-on-violations", `--api-key "$PAYMENTS_API_KEY"`,
		`-v "$PWD:/out"`, `--user "$(id -u)"`, "--junit /out/contract.xml"} {
		if !strings.Contains(last, want) {
			t.Errorf("the gate does not say %q:\n%s", want, last)
		}
	}
	for _, s := range job.Steps[gate+1:] {
		if s.If != "always()" || !strings.HasPrefix(s.Uses, "actions/upload-artifact@") || s.With["path"] != "contract.xml" {
			t.Errorf("step %q after the gate: want only the upload of contract.xml, if: always()", s.Name)
		}
	}
	if gate == len(job.Steps)-1 {
		t.Error("nothing keeps the gate's JUnit report")
	}
}

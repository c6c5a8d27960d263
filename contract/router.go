// Routing without regular expressions: the documents' paths are plain
// segments and whole-segment variables, which a segment walk matches as
// kin-openapi's gorilla/mux router does, in its order, with none of its
// per-request allocations. A document of any other shape is routed by
// gorillamux alone.

package contract

import (
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
)

// segmentRouter routes by path segments. Its routes are in gorillamux's
// order (Paths.InMatchingOrder), and each method's route is built once:
// the routes are immutable and shared by every request.
type segmentRouter struct {
	paths []segmentPath
}

// segmentPath is one path template: its segments after the leading
// slash, a variable's name where the segment is "{name}".
type segmentPath struct {
	segs   []string
	vars   []bool
	nvars  int
	routes map[string]*routers.Route // by method
}

// newSegmentRouter builds the router of doc, or nil when doc has a shape
// it does not model: servers other than one at "/", path-level servers,
// or a variable that is not a whole segment or has its own pattern.
func newSegmentRouter(doc *openapi3.T) *segmentRouter {
	if len(doc.Servers) > 1 || len(doc.Servers) == 1 && (doc.Servers[0] == nil || doc.Servers[0].URL != "/") {
		return nil
	}
	var server *openapi3.Server
	if len(doc.Servers) == 1 {
		server = doc.Servers[0]
	}
	sr := &segmentRouter{}
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		if len(item.Servers) > 0 || !strings.HasPrefix(path, "/") {
			return nil
		}
		sp := segmentPath{segs: strings.Split(path[1:], "/"), routes: map[string]*routers.Route{}}
		sp.vars = make([]bool, len(sp.segs))
		for i, seg := range sp.segs {
			if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
				name := seg[1 : len(seg)-1]
				if name == "" || strings.ContainsAny(name, "{}:") {
					return nil
				}
				sp.segs[i], sp.vars[i] = name, true
				sp.nvars++
			} else if strings.ContainsAny(seg, "{}") {
				return nil
			}
		}
		for method, op := range item.Operations() {
			sp.routes[method] = &routers.Route{Spec: doc, Server: server, Path: path, PathItem: item, Method: method, Operation: op}
		}
		sr.paths = append(sr.paths, sp)
	}
	return sr
}

// FindRoute is gorillamux's FindRoute: the first path that matches
// decides, and a method it does not declare is ErrMethodNotAllowed.
func (sr *segmentRouter) FindRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	path := req.URL.EscapedPath()
	if !strings.HasPrefix(path, "/") {
		return nil, nil, routers.ErrPathNotFound
	}
	path = path[1:]
	for i := range sr.paths {
		sp := &sr.paths[i]
		if !sp.match(path) {
			continue
		}
		route := sp.routes[req.Method]
		if route == nil {
			return nil, nil, routers.ErrMethodNotAllowed
		}
		if sp.nvars == 0 {
			return route, nil, nil // no map to make: a nil one reads as empty
		}
		params := make(map[string]string, sp.nvars)
		rest := path
		for j, seg := range sp.segs {
			value, after, _ := strings.Cut(rest, "/")
			if sp.vars[j] {
				params[seg] = value
			}
			rest = after
		}
		return route, params, nil
	}
	return nil, nil, routers.ErrPathNotFound
}

// match reports whether path (without its leading slash) has the
// template's segments: the same literals, a non-empty value for each
// variable, nothing more.
func (sp *segmentPath) match(path string) bool {
	rest := path
	for j, seg := range sp.segs {
		value, after, found := strings.Cut(rest, "/")
		last := j == len(sp.segs)-1
		if found == last {
			return false // too many segments, or too few
		}
		if sp.vars[j] {
			if value == "" {
				return false
			}
		} else if value != seg {
			return false
		}
		rest = after
	}
	return true
}

// The scheduler: one timer heap per merchant, measured on that merchant's
// clock, and one goroutine that fires what falls due in real time.

package lifecycle

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// job is one thing to do at one instant of a merchant's clock.
type job struct {
	due time.Time
	seq uint64 // keeps jobs due at the same instant in the order they were added
	fn  func()
}

type jobHeap []job

func (h jobHeap) Len() int { return len(h) }
func (h jobHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}
func (h jobHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *jobHeap) Push(x any)   { *h = append(*h, x.(job)) }
func (h *jobHeap) Pop() any {
	old := *h
	j := old[len(old)-1]
	old[len(old)-1] = job{}
	*h = old[:len(old)-1]
	return j
}

// queue is one merchant's pending jobs. run serialises firing, so jobs of
// a merchant run one at a time and in due order, whether the timer or an
// Advance fires them.
type queue struct {
	jobs jobHeap
	run  sync.Mutex
}

// Scheduler runs jobs when each merchant's clock reaches them. Expiries,
// scenario steps and webhook retries all go through it, so advancing a
// frozen clock brings all of them forward together.
type Scheduler struct {
	clocks *Clocks

	mu     sync.Mutex
	queues map[string]*queue
	seq    uint64

	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	started sync.Once      // the loop's start, or its place taken by a Stop first
	running sync.WaitGroup // merchants' jobs being fired by the loop
}

// NewScheduler returns a scheduler on clocks; Start sets it running.
func NewScheduler(clocks *Clocks) *Scheduler {
	return &Scheduler{
		clocks: clocks,
		queues: make(map[string]*queue),
		wake:   make(chan struct{}, 1),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
}

// At runs fn once the merchant's clock reaches due.
//
// The loop is woken only when the job is the merchant's earliest: behind
// an earlier job it cannot move the loop's next wake-up, which that job's
// deadline already bounds (or whose firing goroutine pokes the loop when
// done). Every create adds an expiry later than the ones before it, and
// waking the loop for each cost a thread switch and a pass over every
// merchant's queue.
func (s *Scheduler) At(merchantID string, due time.Time, fn func()) {
	s.mu.Lock()
	q := s.queues[merchantID]
	if q == nil {
		q = &queue{}
		s.queues[merchantID] = q
	}
	s.seq++
	// heap.Push without the job boxed in an interface (an allocation a
	// job): appended, then moved up as Push moves it.
	q.jobs = append(q.jobs, job{due: due, seq: s.seq, fn: fn})
	heap.Fix(&q.jobs, len(q.jobs)-1)
	first := q.jobs[0].seq == s.seq
	s.mu.Unlock()
	if first {
		s.poke()
	}
}

// Pending is the number of jobs waiting for a merchant.
func (s *Scheduler) Pending(merchantID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.queues[merchantID]; q != nil {
		return q.jobs.Len()
	}
	return 0
}

// PendingAll is the number of jobs waiting, all merchants together.
func (s *Scheduler) PendingAll() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, q := range s.queues {
		n += q.jobs.Len()
	}
	return n
}

// Forget drops a merchant that is gone, with every job it had.
func (s *Scheduler) Forget(merchantID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.queues[merchantID]; q != nil {
		q.jobs = nil
		delete(s.queues, merchantID)
	}
}

// Reset drops every job of a merchant.
func (s *Scheduler) Reset(merchantID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.queues[merchantID]; q != nil {
		q.jobs = nil
	}
}

func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// popDue takes the merchant's earliest job if it is due by until.
func (s *Scheduler) popDue(q *queue, until time.Time) (job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q.jobs.Len() == 0 || q.jobs[0].due.After(until) {
		return job{}, false
	}
	return heap.Pop(&q.jobs).(job), true
}

// Advance moves the merchant's clock forward to target, firing every job
// that falls due on the way, in due order, each with the clock set to its
// due time (so what a job stamps reads as when it was due). It returns how
// many jobs fired.
func (s *Scheduler) Advance(ctx context.Context, merchantID string, target time.Time) (int, error) {
	s.mu.Lock()
	q := s.queues[merchantID]
	if q == nil {
		q = &queue{}
		s.queues[merchantID] = q
	}
	s.mu.Unlock()
	q.run.Lock()
	defer q.run.Unlock()
	defer s.poke() // real clocks: the earliest deadline may have moved closer
	fired := 0
	for {
		j, ok := s.popDue(q, target)
		if !ok {
			break
		}
		if err := s.clocks.AdvanceTo(ctx, merchantID, j.due); err != nil {
			s.requeue(q, j)
			return fired, err
		}
		j.fn()
		fired++
	}
	return fired, s.clocks.AdvanceTo(ctx, merchantID, target)
}

// requeue puts back a job taken but not run.
func (s *Scheduler) requeue(q *queue, j job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	heap.Push(&q.jobs, j)
}

// Start runs the timer goroutine until Stop; once, however often it is
// called, and never after Stop.
func (s *Scheduler) Start() {
	s.started.Do(func() { go s.loop() })
}

// Stop ends the timer goroutine and waits for it; jobs not yet due stay
// unfired. A scheduler never started has none to wait for.
func (s *Scheduler) Stop() {
	s.started.Do(func() { close(s.done) })
	s.once.Do(func() { close(s.stop) })
	<-s.done
}

func (s *Scheduler) loop() {
	defer close(s.done)
	defer s.running.Wait()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := s.fireDue()
		if wait < 0 {
			wait = time.Hour
		}
		timer.Reset(wait)
		select {
		case <-s.stop:
			return
		case <-s.wake:
		case <-timer.C:
		}
	}
}

// fireDue runs every job that is due now on its merchant's clock and says
// how long until the next one is (-1 when none will fall due by itself:
// frozen clocks move only when advanced).
func (s *Scheduler) fireDue() time.Duration {
	s.mu.Lock()
	merchants := make(map[string]*queue, len(s.queues))
	for m, q := range s.queues {
		if q.jobs.Len() > 0 {
			merchants[m] = q
		}
	}
	s.mu.Unlock()
	next := time.Duration(-1)
	for m, q := range merchants {
		// TryLock: an Advance, or an earlier round of this loop, is
		// already firing this merchant's jobs.
		if !q.run.TryLock() {
			continue
		}
		now, err := s.now(m)
		if err != nil {
			// The store did not answer: look again in a while.
			q.run.Unlock()
			if next < 0 || retryRead < next {
				next = retryRead
			}
			continue
		}
		s.mu.Lock()
		due := q.jobs.Len() > 0 && !q.jobs[0].due.After(now)
		if !due && q.jobs.Len() > 0 && s.clocks.Mode() == ClockReal {
			if w := q.jobs[0].due.Sub(now); next < 0 || w < next {
				next = max(w, 0)
			}
		}
		s.mu.Unlock()
		if !due {
			q.run.Unlock()
			continue
		}
		// A job may block (a webhook retry waits for its attempt), so
		// each merchant's jobs run on their own goroutine: one merchant's
		// slow endpoint never delays another's expiries.
		s.running.Add(1)
		go func() {
			defer s.running.Done()
			for {
				now, err := s.now(m)
				if err != nil {
					break
				}
				j, ok := s.popDue(q, now)
				if !ok {
					break
				}
				j.fn()
			}
			q.run.Unlock()
			s.poke() // the next deadline of this merchant counts again
		}()
	}
	return next
}

// retryRead is how soon the loop looks again at a merchant whose clock
// could not be read.
const retryRead = time.Second

// now reads the merchant's clock for the timer loop, which has no
// request to bound it.
func (s *Scheduler) now(merchantID string) (time.Time, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return s.clocks.Now(ctx, merchantID)
}

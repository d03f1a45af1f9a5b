package cuzk

import (
	"fmt"

	"github.com/cuzk/cuzk/go-bindings/internal/ccuzk"
)

// Status is a cuzk_status code (include/cuzk.h). Values never change.
type Status uint32

// Statuses; KEEP IN SYNC with cuzk_status (checked by TestStatusesMatchHeader).
const (
	StatusOK                  Status = 0
	StatusNullArgument        Status = 100
	StatusInvalidArgument     Status = 101
	StatusUnknownCircuit      Status = 102
	StatusBufferTooSmall      Status = 103
	StatusCircuitMismatch     Status = 104
	StatusUnsupported         Status = 105
	StatusTooLarge            Status = 106
	StatusInvalidHandle       Status = 107
	StatusIO                  Status = 200
	StatusFileNotFound        Status = 201
	StatusBadPCEFile          Status = 202
	StatusBadParamsFile       Status = 300
	StatusParamsMismatch      Status = 301
	StatusParamsIdentityDelta Status = 302
	StatusSynthesisFailed     Status = 400
	StatusUnsatisfied         Status = 401
	StatusVerificationFailed  Status = 402
	StatusMalformedProof      Status = 403
	StatusOverBudget          Status = 404
	StatusCancelled           Status = 405
	StatusGPU                 Status = 500
	StatusNoSuchDevice        Status = 501
	StatusLoggerInUse         Status = 600
	StatusPanic               Status = 900
	StatusInternal            Status = 901
)

// String is the status's static text, e.g. "CUZK_FILE_NOT_FOUND: no such file".
func (s Status) String() string { return ccuzk.StatusStr(uint32(s)) }

// Error is a failed call: the status, the operation and the library's detail.
// Compare with errors.Is against the Err* sentinels (which match by status).
type Error struct {
	Status  Status
	Op      string // the C function, e.g. "cuzk_pce_load"
	Message string // the detail the library wrote into cuzk_error
}

func (e *Error) Error() string {
	if e.Op == "" {
		return e.Status.String()
	}
	if e.Message == "" {
		return fmt.Sprintf("%s: %s", e.Op, e.Status)
	}
	return fmt.Sprintf("%s: %s (%s)", e.Op, e.Message, e.Status)
}

// Is makes errors.Is(err, ErrFileNotFound) true for any *Error of that status.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Op == "" && t.Message == "" && t.Status == e.Status
}

// Sentinels for errors.Is, one per status.
var (
	ErrNullArgument        = &Error{Status: StatusNullArgument}
	ErrInvalidArgument     = &Error{Status: StatusInvalidArgument}
	ErrUnknownCircuit      = &Error{Status: StatusUnknownCircuit}
	ErrBufferTooSmall      = &Error{Status: StatusBufferTooSmall}
	ErrCircuitMismatch     = &Error{Status: StatusCircuitMismatch}
	ErrUnsupported         = &Error{Status: StatusUnsupported}
	ErrTooLarge            = &Error{Status: StatusTooLarge}
	ErrInvalidHandle       = &Error{Status: StatusInvalidHandle}
	ErrIO                  = &Error{Status: StatusIO}
	ErrFileNotFound        = &Error{Status: StatusFileNotFound}
	ErrBadPCEFile          = &Error{Status: StatusBadPCEFile}
	ErrBadParamsFile       = &Error{Status: StatusBadParamsFile}
	ErrParamsMismatch      = &Error{Status: StatusParamsMismatch}
	ErrParamsIdentityDelta = &Error{Status: StatusParamsIdentityDelta}
	ErrSynthesisFailed     = &Error{Status: StatusSynthesisFailed}
	ErrUnsatisfied         = &Error{Status: StatusUnsatisfied}
	ErrVerificationFailed  = &Error{Status: StatusVerificationFailed}
	ErrMalformedProof      = &Error{Status: StatusMalformedProof}
	ErrOverBudget          = &Error{Status: StatusOverBudget}
	ErrCancelled           = &Error{Status: StatusCancelled}
	ErrGPU                 = &Error{Status: StatusGPU}
	ErrNoSuchDevice        = &Error{Status: StatusNoSuchDevice}
	ErrLoggerInUse         = &Error{Status: StatusLoggerInUse}
	ErrPanic               = &Error{Status: StatusPanic}
	ErrInternal            = &Error{Status: StatusInternal}
)

// ErrClosed is returned by methods of a handle after its Close.
var ErrClosed = fmt.Errorf("cuzk: handle is closed")

func check(op string, s ccuzk.Status, msg string) error {
	if s == ccuzk.StatusOK {
		return nil
	}
	return &Error{Status: Status(s), Op: op, Message: msg}
}

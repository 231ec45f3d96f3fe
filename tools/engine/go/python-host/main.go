// Command pulumi-language-python is langop-infra's own Python language host for tests.
//
// The upstream host (module github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3)
// is not served by the Go module proxy, so tools/engine/build builds this one instead. It does
// what the engine needs to run Python programs, dynamic providers, component providers and
// policy packs, and no more: the heavy lifting (virtualenvs, the policy-pack proxy, plugin
// output streams) is the SDK's own, from github.com/pulumi/pulumi/sdk/v3. Code generation,
// packing, linking and debugging answer Unimplemented.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	sdk "github.com/pulumi/pulumi/sdk/v3"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/cmdutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// The exec shim ships in sdk/v3 (python/cmd) and is copied beside this binary by the build.
const execShim = "pulumi-language-python-exec"

// Exit code of the shim after it showed the user an actionable message: no second error.
const exitShownToUser = 32

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	shim          string
	engineAddress string
	cancel        context.Context
	stop          context.CancelFunc
}

func main() {
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.String("tracing", "", "ignored: this host does not trace")
	flag.Parse()
	if *showVersion {
		fmt.Println(version.Version)
		return
	}
	self, err := os.Executable()
	if err != nil {
		cmdutil.Exit(err)
	}
	shim := filepath.Join(filepath.Dir(self), execShim)
	if _, err := os.Stat(shim); err != nil {
		cmdutil.Exit(fmt.Errorf("missing %s beside the language host: %w", execShim, err))
	}
	ctx, stop := context.WithCancel(context.Background())
	h := &host{shim: shim, cancel: ctx, stop: stop}
	if args := flag.Args(); len(args) > 0 {
		h.engineAddress = args[0]
	}
	serve(h)
}

func serve(h *host) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	done := make(chan bool)
	go func() { <-ctx.Done(); stop(); close(done) }()
	if h.engineAddress != "" {
		if err := rpcutil.Healthcheck(ctx, h.engineAddress, 5*time.Minute, stop); err != nil {
			cmdutil.Exit(err)
		}
	}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: done,
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, h)
			return nil
		},
	})
	if err != nil {
		cmdutil.Exit(err)
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		cmdutil.Exit(err)
	}
}

func (h *host) Handshake(
	ctx context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.engineAddress = req.EngineAddress
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

// GetRequiredPackages names none: every plugin the tests use is found on PATH.
func (h *host) GetRequiredPackages(
	context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *host) GetRequiredPlugins(
	context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	h.stop()
	return &emptypb.Empty{}, nil
}

func toolchainFor(info *pulumirpc.ProgramInfo, plugin bool) (toolchain.Toolchain, error) {
	opts := toolchain.PythonOptions{Root: info.RootDirectory, ProgramDir: info.ProgramDirectory}
	options := info.GetOptions().AsMap()
	if venv, ok := options["virtualenv"].(string); ok {
		opts.Virtualenv = venv
	}
	// Plugins never run on the ambient interpreter: upstream defaults them to ./venv too.
	if plugin && opts.Virtualenv == "" {
		opts.Virtualenv = "venv"
	}
	return toolchain.ResolveToolchain(opts)
}

func (h *host) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	closer, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.IsTerminal)
	if err != nil {
		return err
	}
	defer closer.Close()
	tc, err := toolchainFor(req.Info, false)
	if err != nil {
		return err
	}
	err = tc.InstallDependencies(server.Context(), req.Info.ProgramDirectory, req.UseLanguageVersionTools,
		true, stdout, stderr)
	if err != nil {
		return err
	}
	return closer.Close()
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	tc, err := toolchainFor(req.Info, false)
	if err != nil {
		return nil, err
	}
	if err := tc.ValidateVenv(ctx); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(h.cancel)
	defer cancel()
	context.AfterFunc(ctx, cancel)
	cmd, err := tc.Command(runCtx, append([]string{h.shim}, h.runArgs(req)...)...)
	if err != nil {
		return nil, err
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	env, err := runEnv(cmd.Env, req)
	if err != nil {
		return nil, err
	}
	cmd.Env = env
	return runResponse(cmd.Run()), nil
}

func (h *host) runArgs(req *pulumirpc.RunRequest) []string {
	var args []string
	add := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name, value)
		}
	}
	add("monitor", req.GetMonitorAddress())
	add("engine", h.engineAddress)
	add("project", req.GetProject())
	add("root_directory", req.GetInfo().GetRootDirectory())
	add("stack", req.GetStack())
	add("pwd", req.GetPwd())
	add("dry_run", strconv.FormatBool(req.GetDryRun()))
	add("parallel", strconv.Itoa(int(req.GetParallel())))
	add("organization", req.GetOrganization())
	args = append(args, req.GetInfo().GetEntryPoint())
	return append(args, req.GetArgs()...)
}

func runEnv(env []string, req *pulumirpc.RunRequest) ([]string, error) {
	if env == nil {
		env = os.Environ()
	}
	config, err := json.Marshal(req.GetConfig())
	if err != nil {
		return nil, err
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	keys, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, err
	}
	return append(env, "PULUMI_CONFIG="+string(config), "PULUMI_CONFIG_SECRET_KEYS="+string(keys)), nil
}

func runResponse(err error) *pulumirpc.RunResponse {
	if err == nil {
		return &pulumirpc.RunResponse{}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if status, ok := exit.Sys().(syscall.WaitStatus); ok && status.ExitStatus() == exitShownToUser {
			return &pulumirpc.RunResponse{Bail: true}
		}
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("program exited with non-zero exit code: %d",
			exit.ExitCode())}
	}
	return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not run the Python program: %v", err)}
}

// RunPlugin runs a policy pack (kind analyzer) through the SDK's policy proxy, which hands the
// pack its stack configuration, and any other Python plugin (the component package) by its
// folder's __main__.py.
func (h *host) RunPlugin(req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer) error {
	ctx := server.Context()
	analyzer := req.Kind == string(apitype.AnalyzerPlugin)
	tc, err := toolchainFor(req.Info, !analyzer)
	if err != nil {
		return err
	}
	args := append([]string{req.Info.ProgramDirectory}, req.Args...)
	if analyzer {
		args = append(append([]string{"-u", "-m", "pulumi.policy"}, req.Args...), req.Info.ProgramDirectory)
	}
	cmd, err := tc.Command(ctx, args...)
	if err != nil {
		return err
	}
	closer, stdout, stderr, err := rpcutil.MakeRunPluginStreams(server, false)
	if err != nil {
		return err
	}
	defer closer.Close()
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Dir = req.Pwd
	var proxy *sdk.PolicyProxy
	if analyzer {
		cmd.Dir = req.Info.ProgramDirectory
		if proxy, stdout, err = policyProxy(ctx, cmd, stdout); err != nil {
			return err
		}
	}
	cmd.Env = append(cmd.Env, req.Env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := startPlugin(ctx, cmd, proxy); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return server.Send(&pulumirpc.RunPluginResponse{
				Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: int32(exit.ExitCode())},
			})
		}
		return fmt.Errorf("could not run the Python plugin: %w", err)
	}
	return closer.Close()
}

func startPlugin(ctx context.Context, cmd *exec.Cmd, proxy *sdk.PolicyProxy) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	if proxy != nil {
		return proxy.Attach(ctx, cmd)
	}
	return cmd.Wait()
}

// policyProxy answers the engine as the pack until the stack's configuration arrives, which
// the pack reads from its environment.
func policyProxy(
	ctx context.Context, cmd *exec.Cmd, stdout io.Writer,
) (*sdk.PolicyProxy, io.Writer, error) {
	proxy, stdout, err := sdk.NewPolicyProxy(ctx, stdout)
	if err != nil {
		return nil, nil, fmt.Errorf("could not start the policy pack proxy: %w", err)
	}
	config, err := proxy.AwaitConfiguration(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("could not get the stack's configuration: %w", err)
	}
	if config == nil {
		return proxy, stdout, nil
	}
	values, err := json.Marshal(config.Config)
	if err != nil {
		return nil, nil, err
	}
	for name, value := range map[string]string{
		"PULUMI_ORGANIZATION": config.Organization, "PULUMI_PROJECT": config.Project,
		"PULUMI_STACK": config.Stack, "PULUMI_DRY_RUN": strconv.FormatBool(config.DryRun),
		"PULUMI_CONFIG": string(values),
	} {
		if value != "" {
			cmd.Env = append(cmd.Env, name+"="+value)
		}
	}
	return proxy, stdout, nil
}

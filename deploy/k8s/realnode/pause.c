/* The pod sandbox's process (the pause image of run.sh): it holds the pod's namespaces, sleeps
 * until SIGINT or SIGTERM ends it, and reaps any child handed to it. */
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) { (void)sig; _exit(0); }

static void reap(int sig) {
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0) {
	}
}

int main(void) {
	signal(SIGINT, stop);
	signal(SIGTERM, stop);
	signal(SIGCHLD, reap);
	for (;;)
		pause();
}
